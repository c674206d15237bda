package driver

import (
	"context"
	"time"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// Operation is what a run does with the strategy's parameters.
type Operation string

// The operations a driver validates parameters for.
const (
	OperationBackup  Operation = "Backup"
	OperationRestore Operation = "Restore"
	OperationReclaim Operation = "Reclaim"
)

// Driver is what a driver author implements: level-based, reconcile-style
// methods the SDK calls repeatedly (on every change of the job or of a
// watched backend object, and at least every third of the claim's lease)
// while this replica holds the run's claim. Each call must be idempotent:
// read the backend, create what is missing with Run.CreateOrAdopt (never
// blindly), and report.
//
// Errors: a *RunError (Fail), *TemplateError, *ParameterError or
// *ConflictError ends the run Failed with reason respectively the
// RunError's, TemplateError, InvalidParameters or BackendFailed; any other
// error is transient: the SDK logs it and calls again with backoff, keeping
// the claim renewed.
type Driver interface {
	// ValidateParameters checks the strategy's parameters for op before
	// anything runs, and again on every call (it must be cheap and pure).
	// Refuse unknown keys (DecodeParameters) and templates that do not
	// parse (ParseJSON).
	ValidateParameters(ctx context.Context, op Operation, s v1alpha1.Strategy) error
	// ReconcileBackup drives one backup. Outcome.Done means the backup is
	// complete and restorable: the SDK then creates the Backup (with
	// Outcome.DriverData) and ends the run Succeeded.
	ReconcileBackup(ctx context.Context, run *BackupRun) (Outcome, error)
	// CancelBackup stops the run and removes what it created on the
	// backend (deletion requested is enough); nil means done and the SDK
	// ends the run Cancelled. Called only after spec.cancel was set.
	CancelBackup(ctx context.Context, run *BackupRun) error
	// ReconcileRestore drives one restore into run.Target. Outcome.Done
	// ends the run Succeeded.
	ReconcileRestore(ctx context.Context, run *RestoreRun) (Outcome, error)
	// CancelRestore is CancelBackup for a restore.
	CancelRestore(ctx context.Context, run *RestoreRun) error
}

// Reclaimer is implemented by a driver offering the Reclaim capability.
type Reclaimer interface {
	// Reclaim deletes the backend data of run.Backup, which is being
	// deleted. Outcome.Done means the data is gone: the SDK removes the
	// finalizer backups.cozystack.io/reclaim. An error sets the Backup's
	// condition Reclaim=False, reason ReclaimFailed, with the error as
	// message, and is retried with backoff; Outcome.DriverData is ignored.
	Reclaim(ctx context.Context, run *ReclaimRun) (Outcome, error)
}

// Outcome is what one call of a Driver method observed.
type Outcome struct {
	// Done: the run's backend work finished successfully.
	Done bool
	// Progress, when not nil, is reported in status.progress; a report
	// that differs from the last one refreshes progress.time, which the
	// core's stall check reads.
	Progress *Progress
	// DriverData is the backup's locator (ReconcileBackup with Done only):
	// any value that marshals to a JSON object, stored in the Backup's
	// spec.driverData and handed back in RestoreRun.Backup and
	// ReclaimRun.Backup.
	DriverData any
	// RestoreOverlay (ReconcileBackup with Done only), when not nil, is
	// a JSON merge patch, any value that marshals to a JSON object, stored
	// in the Backup's spec.restoreOverlay: the core applies it to the
	// captured spec when it creates a new application from the Backup
	// (contract k7, "Restores"), e.g. to make the chart bootstrap from
	// this backup.
	RestoreOverlay any
	// RequeueAfter asks for the next call within this duration (it is
	// capped by the claim's renewal interval); zero means the
	// Options.PollInterval.
	RequeueAfter time.Duration
}

// Progress is a progress report.
type Progress struct {
	// Percent done, 0..100, when known.
	Percent *int32
	// Message for a person, at most 1024 bytes (longer is cut).
	Message string
}
