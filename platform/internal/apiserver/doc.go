// Package apiserver is cozystack-api: an aggregated API server (on
// k8s.io/apiserver) serving apps.cozystack.io/v1alpha1 with one namespaced
// resource per ApplicationDefinition (contract K1,
// contracts/schemas/v1alpha1/k1-application.md). Kinds come from a watch
// on ApplicationDefinitions (package adwatcher), compiled by package
// appkinds, and are swapped in at run time (Applications); objects are
// stored as Flux HelmReleases through the storage a StorageFactory builds
// (package cozystack.io/platform/internal/registry/application).
// Authentication and authorization are delegated to kube-apiserver (RBAC);
// the request limits (bodydepth, requestlimits.go) are K1's "Request
// limits".
//
// Options and New build the server; RegisterLocal registers it with
// kube-apiserver as `make demo` does (docs/contributor/architecture.md, "The main job").
package apiserver
