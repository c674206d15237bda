// Package registration writes the platform's verdict on each BackupDriver
// registration (contract k7, contracts/schemas/v1alpha1/k7-backup-driver.md,
// "Registration"): condition Accepted (reason Accepted, or the refusal
// drivers.Decide gives, with a Warning event of that reason), and
// status.catalog, status.package and status.component, what the platform
// found ships the driver. It writes for people: the binder and the restore
// reconciler decide again from the same rules (drivers.Resolver.Accept)
// at each binding, so a stale status never binds a job.
//
// It reconciles a registration when it changes, and every registration
// when a driver Lease, a Package, a PackageSource or a namespace with the
// annotation cozystack.io/package changes.
package registration
