// Command cozystack-api is the aggregated API server of the application API
// (apps.cozystack.io/v1alpha1): one resource per ApplicationDefinition,
// stored as Flux HelmReleases. The server is package
// cozystack.io/platform/internal/apiserver, the storage of one kind
// platform/internal/registry/application; the contract it serves is K1,
// contracts/schemas/v1alpha1/k1-application.md.
//
// Its command line is package cozystack.io/platform/internal/command's:
// exit status 0 on a clean stop, 1 on an error, 2 on a usage error
// (docs/operator/install.md, "The platform binaries").
package main
