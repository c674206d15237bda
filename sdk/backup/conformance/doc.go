// Package conformance is the driver conformance suite of contract k7
// (contracts/schemas/v1alpha1/k7-backup-driver.md): every backup driver runs
// it in its own tests, against a real API server with the
// backups.cozystack.io CRDs applied, by calling Run(t, Setup{...}).
//
// The suite plays the platform's backup core: it creates BackupJobs and
// RestoreJobs, labels them backups.cozystack.io/driver and writes their
// status.binding itself, as the core does, by server-side apply under
// v1alpha1.CoreFieldManager (sdk/backup/apply.Status). No core runs, so
// the suite never checks the core's bounds (PendingTimeout, Stalled). It
// starts and stops driver replicas through Setup.Start, and, since nothing
// runs pods or upstream operators here, it finishes the driver's backend
// objects through Setup.Complete, the way their controller would.
//
// Subtests (each in a namespace of its own):
//   - registration: the BackupDriver serves the kind, speaks v1alpha1, its
//     Lease is live.
//   - exclusivity: jobs bound to another driver, or not bound, are never
//     touched (even when labelled with the driver's name); of two replicas
//     exactly one claims a job, and when it stops the other takes the claim
//     over (takeovers 1) and resumes without a second backend object.
//   - cancel: spec.cancel ends the job Cancelled (Ready=False, reason
//     Cancelled) with its backend objects removed.
//   - idempotency: with the first create of each kind answered 409 after it
//     happened and the first status write, update and patch refused, the
//     job still succeeds with one backend object and one Backup (labelled
//     with the Plan UID of the job's status.planUID); an object
//     squatting on the derived name fails the job BackendFailed naming it.
//   - restore-new-application: a RestoreJob of mode NewApplication
//     succeeds (RestoreToNew) or fails CapabilityMissing (without it); the
//     Backup and its job are untouched.
//   - cleanup: deleting a Backup reclaims it (Reclaim): the finalizer goes
//     only after the driver removed its backend objects; without Reclaim
//     the Backup carries no finalizer.
//   - deletion: deleting a running job (it carries the finalizer
//     backups.cozystack.io/backend-cleanup from its claim on) leaves no
//     backend object, and a new job of the same name then succeeds; what
//     an earlier job of the name left (the suite makes it with Squat) is
//     removed, not a conflict; deleting a succeeded job keeps its Backup
//     and every backend object, none of them owned by the job any more.
//   - unknown-options: parameters with an unknown key fail the job
//     InvalidParameters naming the key, with nothing created.
package conformance
