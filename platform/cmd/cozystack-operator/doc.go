// Command cozystack-operator delivers catalogs: it pulls each
// PackageSource's OCI artifact, verifies it, serves its charts to
// helm-controller as ExternalArtifacts, installs the catalog's
// ApplicationDefinitions, and installs Packages as HelmReleases through
// least-privilege ServiceAccounts, under one leader-elected
// controller-runtime manager. Its options and reconcilers are package
// cozystack.io/platform/internal/operator's; the artifact it reads is
// specified in contracts/artifact/README.md, and docs/operator/catalogs.md ("Catalog
// delivery") walks through it.
//
// Its command line is package cozystack.io/platform/internal/command's:
// exit status 0 on a clean stop, 1 on an error, 2 on a usage error
// (docs/operator/install.md, "The platform binaries").
package main
