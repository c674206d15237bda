// Command cozypkg makes and publishes catalog artifacts (format:
// cozystack.io/contracts/artifact, README.md) and checks catalogs against
// the contracts (cozystack.io/contracts/conformance).
//
//	cozypkg build <catalog-dir> [--oci-layout DIR] [--tag TAG] [-o table|json|yaml]
//	cozypkg push <catalog-dir|oci-layout-dir> <host/repository[:tag]> [--plain-http] [-o table|json|yaml]
//	cozypkg package <library-chart-dir> [-d DIR] [-o table|json|yaml]
//	cozypkg vendor-lib <library.tgz> <chart-or-dir>... [--check] [-o table|json|yaml]
//	cozypkg push-lib <library.tgz> <host/repository> [--plain-http] [-o table|json|yaml]
//	cozypkg conformance <catalog-dir|oci-layout-dir|host/repository:tag> --platform-version X [--previous DIR|REF] [--live --kubeconfig K] [-o table|json|yaml]
//	cozypkg conformance --ads <ad-file-or-dir>... --platform-version X [-o table|json|yaml]
//
// Progress goes to stderr, one line per blob (uploading, exists, done); the
// result (-o table, the default: the reference and manifest digest, or the
// report) to stdout. The exit status is in exitStatuses: 0 success, 1 a
// finding, a refusal or an operational failure, 2 a usage error (as the
// boundary linter, cozystack-boundaries, uses 1 and 2). docs/catalog-author/conformance.md
// ("Contracts and conformance") and docs/catalog-author/build-and-push.md
// ("Catalogs: cozypkg build and push") show each command; TestREADME runs every example there.
package main
