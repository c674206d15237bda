// Package driver is the backup-driver runtime of contract k7
// (contracts/schemas/v1alpha1/k7-backup-driver.md): what a backup driver,
// in a catalog or in the platform, links to serve a strategy kind. The
// author implements Driver (and Reclaimer for the Reclaim capability) and
// calls Setup with a manager of its own or of its host, or Start
// standalone. The SDK does the rest of the contract:
//
//   - "Binding": keeps the cluster-scoped BackupDriver registration
//     (strategy kinds, protocol versions, capabilities, catalog, version,
//     Lease) and renews its coordination.k8s.io/v1 Lease "backup-driver-<name>"
//     in the driver's namespace every third of Options.LeaseDuration; it
//     stops renewing when the manager stops.
//   - Acts only on jobs bound to it: its cache holds only objects labelled
//     backups.cozystack.io/driver=<name>, and a job is run only when its
//     status.binding.driverRef.name is the driver's too (the binding is
//     immutable in the API, so no job moves between drivers).
//   - "Runs": one claim per run in status.claim, written before any backend
//     work with the job's resourceVersion as precondition, so of two
//     replicas exactly one claims; renewed every third of
//     Options.ClaimDuration; taken over only when stale (takeovers+1).
//   - Status: every write of a job's status is a server-side apply under the
//     field manager v1alpha1.DriverFieldManager(name) sending the driver's
//     whole intent (phase, claim, progress, startTime, completionTime,
//     backupName, conditions Ready and Reconciling), never status.binding
//     or the core's conditions DriverBound and Stalled. Terminal phases are
//     final: a terminal job is written again only once, when the core
//     ended a run this driver held (DeadlineExceeded): the SDK calls
//     Cancel* to remove what the run created, then releases the claim.
//   - On success of a backup, the Backup named as the job (spec from the
//     binding, the job's applicationSnapshotRef (a reference, never the
//     values: "Snapshots"; BackupRun.Snapshot reads them) and
//     Outcome.DriverData; labels run, driver, plan and plan-uid (from the
//     job's status.planUID, which only the core writes); finalizer
//     backups.cozystack.io/reclaim with the Reclaim capability), then
//     status.backupName. "Retention": a deleted
//     Backup is released only after Reclaimer.Reclaim reports Done; while it
//     fails the Backup has Reclaim=False, reason ReclaimFailed.
//   - spec.cancel: Cancel*, then phase Cancelled, Ready=False, reason
//     Cancelled.
//   - "Deletion": the finalizer backups.cozystack.io/backend-cleanup on a
//     job from its claim on; a job deleted before it produced a Backup is
//     cancelled (Cancel*) before the finalizer goes. Objects of the kinds
//     in Options.Watches that Run.CreateOrAdopt makes in the job's
//     namespace are owned by the job, then by its Backup once it exists.
//     What an earlier job of the same name left (Run.Orphan) is deleted,
//     not adopted and not a conflict.
//   - "Idempotency": CreateOrAdopt, Run.CreateOrAdopt; templates: Render,
//     RenderJSON (text/template, missingkey=error, errors *TemplateError
//     ending the run with reason TemplateError); parameters:
//     DecodeParameters (unknown key: *ParameterError, reason
//     InvalidParameters); credentials: ProjectSecret.
//
// Status writes carry the job's resourceVersion as a precondition
// (apply.StatusAt, not apply.Status): server-side apply with force never
// conflicts, so without it a replica with a stale view would overwrite a
// claim another replica took meanwhile.
//
// Templates render only string values of the operator's parameters
// (RenderJSON): data, which may hold a tenant's application spec, fills
// strings and cannot add fields, objects or containers to what a class
// says, however it is written.
package driver
