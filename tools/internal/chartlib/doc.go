// Package chartlib packages a Helm library chart (cozy-lib, contract K5,
// contracts/schemas/v1alpha1/k5-cozy-lib.md, "Versioning and publication")
// reproducibly (Package) and vendors the package into the charts that
// depend on it (Vendor, FindDependents), leaving what `helm dependency
// build` leaves after a pull from the OCI registry:
// charts/<name>-<version>.tgz and a Chart.lock. The vendored copies are
// committed in the catalogs, so a catalog builds without the platform's
// sources; Check proves a copy is what packaging the library's sources
// gives. Push publishes the package as a Helm OCI chart. cozypkg's
// package, vendor-lib and push-lib commands (and `make cozy-lib`, `make
// vendor-cozy-lib`) run it.
package chartlib
