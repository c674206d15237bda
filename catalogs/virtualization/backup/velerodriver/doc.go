// Package velerodriver is the Velero backup driver of the virtualization
// catalog: strategy kind Velero (StrategyKind), BackupDriver "velero",
// capabilities Reclaim, RestoreToNew and Verify. It implements contract k7
// (contracts/schemas/v1alpha1/k7-backup-driver.md) on the SDK
// (sdk/backup/driver): the SDK registers it, claims runs, writes status and
// makes the Backups; this package maps runs to Velero objects (velero.io/v1
// of github.com/vmware-tanzu/velero, the version go.mod requires), all
// created in Velero's namespace (Options.VeleroNamespace) with names
// "<namespace>.<job>-<role>" (objectName) and the run label
// (Run.CreateOrAdopt: a retry, a takeover or a restarted binary adopts
// what the run created).
//
// Backups ("Runs"). A BackupJob becomes a Velero Backup of the
// application's objects in its namespace, selected by label
// (spec.orLabelSelectors): app.kubernetes.io/instance=<release> (every
// object charts/vm-instance and charts/vm-disk render carries it), and for
// a VMInstance also the releases of the VMDisks its spec (the job's
// application snapshot, read once through BackupRun.Snapshot, which
// verifies its digest) attaches; the kubevirt-velero-plugin, installed
// with Velero, adds the volumes. Storage location and the rest from the
// class's parameters (Parameters; strict: an unknown key fails the job
// InvalidParameters naming it). Spec.driverData of the Backup is
// DriverData (where the Velero backup is).
//
// Phases (phases.go). Every BackupPhase and RestorePhase of the velero
// module maps to a State (a test reads the module's constants):
// none yet, New, Queued, ReadyToStart wait at most the parameters'
// startTimeout (default 30m) from the object's creation, then the job fails
// BackendFailed asking whether Velero runs; InProgress,
// WaitingForPluginOperations*, Finalizing* are running and report item
// counts as progress, so the core's stallTimeout and runTimeout bound
// them; Completed succeeds; PartiallyFailed succeeds degraded: the item
// counts go to the job's status.progress.message and the Backup gets
// Degraded=True (reason PartiallyFailed) with them; FailedValidation
// fails InvalidParameters with Velero's validation errors; Failed and
// Deleting fail BackendFailed with Velero's failure reason. A phase this
// version does not know waits like New, bounded, and is named.
//
// TTL (ttl.go). Velero deletes a backup after spec.ttl; our retention
// (the core, over a Plan's Backups) deletes Backups through Reclaim. The
// TTL must not undercut the retention (Velero deleting data a kept Backup
// points at) nor outlive it. The retention of the job's Plan (label
// backups.cozystack.io/plan) bounds a Backup's age only with maxAge, no
// count rule and minKeep 0 (count rules count periods that have a Backup,
// minKeep keeps the newest n whatever their age): then spec.ttl is maxAge
// plus TTLGrace (1h, so Velero's hourly GC never runs ahead of the core).
// Otherwise no TTL can follow the retention: spec.ttl is MaxTTL (ten years,
// Velero has no "never"), which never undercuts it, and it never outlives
// it because the core's deletion goes through Reclaim, which deletes the
// Velero backup; a ttl in the parameters is used instead and the mismatch
// is reported. The decision and any mismatch are in the Velero Backup's
// annotation AnnotationTTL and in the job's progress message.
//
// Restores ("Restores"). A RestoreJob becomes a Velero Restore of the
// Backup's Velero backup, namespace-mapped into the RestoreJob's namespace
// when the Backup is in another (a BackupGrant allowed it).
//   - InPlace restores every object of the backup; existing objects are
//     left as they are (existingResourcePolicy none, or update from the
//     parameters): Velero never overwrites the data of a live volume, so
//     rolling a VM's disks back means deleting the VMInstance's disks (or
//     the VMDisks) first.
//   - NewApplication: the core has created the new application from the
//     captured spec, so its release renders its own VirtualMachine, Secret
//     and Service: Velero restores only the disks (DataVolumes,
//     PersistentVolumeClaims, PersistentVolumes), never with
//     existingResourcePolicy update, so the source is never touched.
//     Limits: Velero cannot rename objects inside a namespace, and a
//     VMInstance names its disks by VMDisk name, so the new VM attaches
//     the VMDisks its captured spec names: disks that still exist are
//     skipped (Velero's warnings count them) and are shared with the
//     source; the restore brings back disks that were deleted, or, across
//     namespaces, a whole copy. An independent copy beside a live source
//     in one namespace needs a clone (VMDisk source.disk), not Velero.
//
// Cancel. A Velero Backup or Restore that has not started is deleted; a
// running one cannot be stopped, so the cancel waits (a transient error)
// until it ends, then a finished backup is deleted with a
// DeleteBackupRequest and a restore object is deleted (what it restored
// stays). The SDK runs the same cancel when a job is deleted before it
// produced a Backup (its finalizer backups.cozystack.io/backend-cleanup),
// so no Velero Backup, with its long TTL, outlives a deleted running job.
// A Velero Backup that an earlier job of the same name left
// (driver.Run.Orphan) is removed the same way by the new job, which then
// takes its own: no conflict, no adoption (contract k7, "Deletion").
//
// Reclaim ("Retention"). A deleted Backup's Velero backup is deleted the
// way `velero backup delete` does it: a DeleteBackupRequest labelled
// velero.io/backup-name and velero.io/backup-uid; the finalizer goes when
// the Velero Backup is gone (the request is then deleted); a request
// Velero processed with errors is an error (Reclaim=False, ReclaimFailed)
// and is made anew on the next attempt.
//
// Verify. The SDK has no hook for it: the Verifier (verify.go) checks
// every Backup of the driver every Options.VerifyInterval and soon after a
// degraded backup, and writes the Backup's conditions ArtifactMissing
// (True, VeleroBackupNotFound or VeleroBackupDeleting, when the Velero
// backup is gone or going; False, VeleroBackupPresent) and Degraded, as the
// driver's field manager, resending the SDK's Ready.
//
// Rights (charts/velero-backup-driver): Velero's objects only in Velero's
// namespace, so the driver watches none of them: it polls its runs every
// few seconds (Outcome.RequeueAfter) instead of Options.Watches, whose
// cache would list them cluster-wide.
package velerodriver
