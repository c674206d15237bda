// Package sdkcompat keeps the public module cozystack.io/sdk compatible
// between its releases (contracts/schemas/v1alpha1/k7-backup-driver.md,
// "Compatibility rule"; sdk/compat/README.md has the versioning rule).
//
// The SDK's version is sdk/VERSION. A release's baseline is
// sdk/compat/v<version>/: sdk.apidiff, the export data of every package of
// the module as the pinned golang.org/x/exp/cmd/apidiff writes it in module
// mode (apidiff -m -w; tools/go.mod pins it with a tool line, FindTool runs
// it), packages.txt listing those packages, and crds/, copies of
// sdk/backup/crds/*.yaml. Baseline cuts the baseline of sdk/VERSION.
//
// Check compares the module against the newest baseline not newer than
// sdk/VERSION: the Go API with apidiff (every package, whatever exists when
// it runs: apidiff loads <module>/...; internal packages aside), and the
// CustomResourceDefinitions of backups.cozystack.io with DiffCRDs (kinds,
// served versions, every field of openAPIV3Schema by JSON path: removed,
// renamed, type changed, newly required, enum values dropped). A Result
// lists Findings, each compatible, incompatible, or accepted: incompatible
// but listed, in backquotes, in sdk/compat/decisions/v<VERSION>.md with
// sdk/VERSION a breaking bump of the baseline (Version.BreakingBumpOf). The
// module is loaded with GOWORK=off, as its own go.mod says, so a scratch
// copy is checked exactly like the repository's.
//
// RunCanary proves the check works on a scratch copy in a temporary
// directory: unchanged it passes; without one exported function
// (RemoveExportedFunc) it fails naming it; with one CRD field renamed
// (RenameCRDField) it fails naming the field.
//
// Errors returned by Check, Baseline and RunCanary are setup errors (no
// VERSION, no baseline, a package that does not compile, go missing);
// incompatibility is a Result that is not OK. Command cozystack-sdkcompat
// maps them to exit codes 2 and 1; sdk/backup/README.md ("SDK compatibility")
// documents it.
package sdkcompat
