package restore

// LabelRestoreJob on an application names the UID of the RestoreJob that
// created it (mode NewApplication): a retry of that job adopts it, and an
// application without it (or with another UID) is never restored into
// (reason TargetExists).
//
// Its key is outside the cozystack.io domain, which cozystack-api
// refuses on applications: a tenant may set it on the applications of its
// own namespace, which gives it nothing beyond its own rights (package
// doc, "The restore label").
const LabelRestoreJob = "cozystack-backup-core/restore-job"
