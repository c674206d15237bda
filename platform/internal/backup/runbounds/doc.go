// Package runbounds is the backup core's run bounds: for every bound,
// non-terminal BackupJob and RestoreJob (both carry
// backupsv1alpha1.JobStatus) it enforces the limits a driver's run must
// keep (contract k7, contracts/schemas/v1alpha1/k7-backup-driver.md,
// "Runs" and "Field managers"), with the timeouts copied into
// status.binding.timeouts when the job was bound (defaults when unset):
//
//   - bound and not claimed (no status.claim) pendingTimeout after
//     binding.boundTime: phase Failed, Ready=False, reason PendingTimeout;
//   - claimed and running longer than runTimeout since status.startTime
//     (else claim.acquireTime): phase Failed, Ready=False, reason
//     DeadlineExceeded;
//   - claim.renewTime older than claim.leaseDurationSeconds: Stalled=True,
//     reason DriverLost, removed once the claim is renewed or taken over;
//   - no progress for stallTimeout, counted from the later of
//     status.progress.time and claim.acquireTime (a takeover starts the
//     count again): Stalled=True, reason NoProgress, removed by the next
//     report. DriverLost wins over NoProgress.
//
// A failure sets completionTime and drops the core's Reconciling; once a
// job is claimed the core also drops its Reconciling=True
// WaitingForDriver (the driver reports its own).
//
// Status is applied by server-side apply as v1alpha1.CoreFieldManager
// (sdk/backup/apply), and since the binder and the restore reconciler
// write under the same manager, every write resends the core's whole
// intent: the fields the core owns now (read from the job's managedFields,
// owned.go: the binding, the snapshot, DriverBound, and whatever else the
// core wrote) with this package's changes. A write is decided on the
// cached job and made after reading the job again from the API server, so
// it resends what the core owns there, not a stale cached value (a driver's
// write landing between that read and the apply is not detected:
// apply.Status sends no resourceVersion).
//
// A job is evaluated on every change and again at its next deadline
// (RequeueAfter), never by polling; Options.Resync may cap the wait. Time
// comes from Options.Clock, so tests move it.
package runbounds
