// Package apiservertest runs cozystack-api in-process against a test
// control plane (cozystack.io/sdk/testenv), registered through the
// aggregation layer as `make demo` registers it, for the tests of every
// package that needs the application API: Start returns a client of the
// aggregated API.
package apiservertest
