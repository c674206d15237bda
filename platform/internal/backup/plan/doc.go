// Package plan is the Plan reconciler of the backup core (contract k7,
// contracts/schemas/v1alpha1/k7-backup-driver.md, sections "Kinds",
// "Retention" and "Field managers"; the types are in
// sdk/backup/api/v1alpha1/plan_types.go). It starts a Plan's BackupJobs
// on its cron schedule and prunes its Backups by its retention policy.
//
// Scheduling ports the rules of batch/v1 CronJob (Kubernetes'
// pkg/controller/cronjob), not its code:
//
//   - spec.schedule.cron is a standard five-field expression or a
//     descriptor (robfig/cron/v3's standard parser; @every at least 1m),
//     read in the IANA zone spec.schedule.timeZone (default UTC). An
//     invalid one, or one that never comes due, sets Ready=False and
//     Stalled=True, reason InvalidSchedule, naming the field; nothing
//     runs until the spec changes.
//   - A run due at time t starts a BackupJob named JobName(plan, t)
//     ("<plan>-<minutes since the epoch>", at most 63 characters),
//     labelled backups.cozystack.io/plan, controlled by the Plan (owner
//     reference), its spec copied from the Plan's; then the Plan's UID is
//     written to its status.planUID (field manager
//     v1alpha1.PlanFieldManager), which only the core can write. The name
//     is the lock: a restart or a second instance gets AlreadyExists and
//     adopts the job (only one that backs up what the Plan does), so no
//     scheduled time ever has two jobs.
//   - Each scheduled time is acted on once: the scheduler looks at the
//     times due after the latest of the Plan's creation,
//     status.lastScheduleTime and status.lastSkipped.time. Of those, only
//     the most recent may start, and only within
//     spec.startingDeadlineSeconds (default 300) of it. After a longer
//     downtime the Plan gets one status.lastSkipped record, reason
//     MissedSchedule, naming how many runs were missed and the last, and
//     no burst of jobs. When the most recent is still in time it starts
//     and the older ones get that one record.
//   - concurrencyPolicy: with an active job (one of the Plan's BackupJobs
//     neither in a terminal phase nor being deleted, listed in
//     status.active) Forbid skips the run (lastSkipped reason
//     ConcurrencyForbidden), Replace sets spec.cancel on the active jobs
//     and starts the new one, Allow starts it beside them.
//   - spec.suspend starts nothing new (lastSkipped reason Suspended when
//     a run comes due; Ready=True reason Suspended); active jobs go on.
//   - status.lastSuccessfulTime is the latest completionTime of the
//     Plan's Succeeded jobs (never moving back when jobs are deleted).
//   - The reconciler requeues at status.nextScheduleTime (RequeueAfter);
//     it never polls.
//
// Retention (package cozystack.io/platform/internal/backup/retention,
// Apply, decides and deletes) runs on every pass over the Plan's Backups: those labelled
// backups.cozystack.io/plan-uid with the Plan's UID, which the driver
// copies from the job's status.planUID. A Backup of a job made by hand,
// whatever its labels (backups.cozystack.io/plan is a tenant's to write)
// and ownerReferences, is never counted nor deleted. Only Backups with Ready=True count: a
// failed or unfinished Backup neither takes a keep slot (a run of broken
// backups never pushes out the last good one) nor is deleted by
// retention (its driver may still be writing it); a Backup being deleted
// does not count either. A Backup retention does not keep is deleted
// (client.Delete, with a UID precondition) only when its driver (the
// BackupDriver named in spec.driverRef) has the Reclaim capability: the
// driver's finalizer then holds it until the backend data is gone, and
// the core adds no finalizer anywhere. Otherwise it is kept, and the
// Plan's condition Retention=False, reason ReclaimUnsupported, names it
// and its driver; Retention=True, reason RetentionApplied, otherwise.
// While Backups of the Plan are being deleted, Reconciling=True, reason
// Progressing, names them. Ready is about scheduling only (Scheduled,
// Suspended, InvalidSchedule); retention reports in its own condition.
//
// Status is written in one step by server-side apply (package
// cozystack.io/sdk/backup/apply) as v1alpha1.CoreFieldManager, always
// the core's whole intent: observedGeneration, lastScheduleTime,
// nextScheduleTime, lastSuccessfulTime, lastSkipped, active and the
// conditions Ready, Stalled, Reconciling and Retention, each with the
// generation observed. The Plan is read from the API server, not the
// cache, at the start of each pass: its status is the scheduler's memory.
//
// The clock is injected (Options.Clock) so tests drive time.
package plan
