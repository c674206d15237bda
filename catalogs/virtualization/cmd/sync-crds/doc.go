// Command sync-crds writes the CRDs of the catalog's operator charts from
// the sources pinned in crds.yaml (package cozystack.io/sdk/crdsync): files
// of Go modules at pinned versions, CRDs controller-gen generates from
// pinned Go API types, and files of a mirror directory the user names. It
// runs in this module, whose go.mod pins the versions (pins.go keeps the
// API modules required; controller-gen is a tool dependency).
//
//	go run ./cmd/sync-crds [--catalog DIR] [--mirror DIR] [--check]
package main
