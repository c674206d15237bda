// Package binder is the backup core's binder: it binds each BackupJob,
// once, to the one live BackupDriver serving the strategy kind of the
// job's BackupClass for the job's application kind, or says with
// condition DriverBound why it cannot (contract k7,
// contracts/schemas/v1alpha1/k7-backup-driver.md, "Binding" and "Field
// managers"). RestoreJobs are bound by the restore reconciler.
//
// For an unbound BackupJob that is not terminal, cancelled or being
// deleted, one reconcile:
//
//  1. reads the BackupClass spec.backupClassName and its strategy for the
//     application's {apiGroup, kind} (missing: ClassNotFound);
//  2. finds the application: the HelmRelease in the job's namespace
//     labelled apps.cozystack.io/application.{group,kind,name} (none:
//     ApplicationNotFound);
//  3. resolves the strategy kind with drivers.Resolver against the
//     registrations and their Leases, and the handoff list
//     (platform/internal/backup/handoff): Bound, DriverNotInstalled,
//     DriverUnavailable, DriverConflict, ProtocolIncompatible or
//     UnknownStrategyKind;
//  4. summarizes the outcome into the core's status (status.go) and
//     applies it by server-side apply as v1alpha1.CoreFieldManager
//     (sdk/backup/apply), always the core's whole intent for an unbound
//     job: status.observedGeneration, status.phase, conditions DriverBound
//     and Reconciling, and, for the failures the core decides, Ready.
//
// Bound writes status.binding (driverRef, the strategy with its
// parameters, the class name and its timeouts with defaults, boundTime)
// and status.applicationSnapshotRef (snapshot.go: the HelmRelease's
// spec.values stored once per sha256 digest in an immutable ConfigMap of
// the job's namespace, owned through its owners ConfigMap by the jobs and
// Backups using it, which owners.go adds; over 1 MiB, or a stored copy
// that no longer matches its digest, fails the job with SnapshotFailed),
// phase Pending, Reconciling=True WaitingForDriver, then labels the job
// backups.cozystack.io/driver=<driver> (a merge patch by the core's field
// manager) so the driver's cache holds only its jobs. The binder never
// writes a bound job's status again: the API server refuses any change of
// a binding (a CEL rule), and the run bounds (package runbounds) take over.
//
// The waiting reasons (DriverNotInstalled, DriverUnavailable,
// DriverConflict, ProtocolIncompatible, ClassNotFound,
// ApplicationNotFound) keep phase Pending; the job is reconciled again when
// a BackupDriver, a registration's Lease (becoming live or not), its
// BackupClass or its application changes, and at the latest after
// Options.Resync. A job still waiting driverWaitTimeout (the class's, or
// the default 1h without a class) after its creationTimestamp fails with
// DriverWaitTimeout; UnknownStrategyKind fails it at once. Both set phase
// Failed, completionTime and Ready=False with the same reason.
//
// Workers start once the caches of every watched kind have synced, and
// UnknownStrategyKind, the one reason that fails a job on what the cache
// shows, is confirmed against the API server first: a registration the
// cache has not seen yet never fails a job.
//
// Time comes from Options.Clock, so tests move it.
package binder
