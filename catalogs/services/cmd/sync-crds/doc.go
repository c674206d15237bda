// Command sync-crds writes the CRDs of the catalog's operator charts from
// the sources pinned in crds.yaml (package cozystack.io/sdk/crdsync): Go
// modules at the versions go.mod requires, and files of a mirror directory
// the user names. It runs in this module, whose go.mod pins the versions.
//
//	go run ./cmd/sync-crds [--catalog DIR] [--mirror DIR] [--check]
package main
