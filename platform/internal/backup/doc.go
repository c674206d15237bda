// Package backup sets up everything of backups that cozystack-controller
// runs (Setup, one Options): the platform's backup core (contract K7,
// contracts/schemas/v1alpha1/k7-backup-driver.md) and the built-in Job
// driver (jobdriver), each selected by its Options field (--controllers
// backup-core, backup-job-driver).
//
// The core is the Plan scheduler (plan) and its retention (retention),
// the binder (binder) with the registrations it chooses from (drivers,
// registration) and the handoff list (handoff), the run bounds
// (runbounds), the restore reconciler (restore) and the ResourceQuota of
// backup objects in every tenant namespace (quota). The core never
// imports a driver's vendor types and never adds a finalizer to a
// driver's objects (TestCoreImportsNoVendor, TestCoreAddsNoFinalizer).
// backuptest holds the helpers the core's tests share.
package backup
