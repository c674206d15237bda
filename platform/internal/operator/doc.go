// Package operator builds cozystack-operator: one controller-runtime
// manager (package cozystack.io/platform/internal/controllermanager),
// leader-elected on the Lease cozystack-operator.cozystack.io in
// cozy-system, running
//   - the PackageSource reconciler (package packagesourcereconciler): pull,
//     verify, check requirements, publish ExternalArtifacts, install the
//     catalog's ApplicationDefinitions (package adinstaller);
//   - the Package reconciler (package packagereconciler): HelmReleases with
//     least-privilege identities (package rbac), guards and cleanup;
//   - the artifact server (package artifactserver), serving chart archives
//     from the store (package store) to helm-controller, so no Flux
//     source-controller runs.
//
// Options are the command-line options; New builds the operator and Run
// runs it. Command cozystack-operator is its flags and a call to Run. The
// rules it enforces are written in docs/operator/catalogs.md ("Catalog delivery") and
// contracts/artifact/README.md (the artifact, and "Pulling (what the
// operator relies on)"); its tests here run it against the local control
// plane.
package operator
