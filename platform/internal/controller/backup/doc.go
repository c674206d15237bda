// Package backup sets up the platform's backup core (contract K7,
// contracts/schemas/v1alpha1/k7-backup-driver.md) in a controller
// manager: the Plan scheduler and retention (plan), the binder (binder),
// the run bounds (runbounds), the restore reconciler (restore) and the
// ResourceQuota of backup objects in every tenant namespace (quota). The
// core never imports a driver's vendor types and never adds a finalizer to
// a driver's objects; drivers, the built-in Job driver included
// (platform/internal/backup/jobdriver), are set up on their own.
package backup
