// Package api is the contract.
package api

// Group is the API group of the applications.
const Group = "apps.example.io"
