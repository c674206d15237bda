// Package handoff holds the handoff list shipped with this platform
// release (handoff.yaml, embedded): the backup strategy kinds the platform
// once served itself and has handed over to a catalog, each with the
// catalog's name and the minimum catalog version whose driver serves the
// kind (contract k7, contracts/schemas/v1alpha1/k7-backup-driver.md,
// "Binding", "Handoff").
//
// The binder passes the list to drivers.Resolver: a job whose strategy
// kind no registration serves waits with DriverBound reason
// DriverNotInstalled (naming the catalog and version to install) when the
// kind is listed here, and fails with UnknownStrategyKind when it is not.
//
// The document is read strictly: an unknown key, an empty field, a
// malformed strategy kind, catalog name or version, or a kind listed twice
// is an error naming the entry, so a typo in a release never turns a
// handed-over kind into an unknown one.
package handoff
