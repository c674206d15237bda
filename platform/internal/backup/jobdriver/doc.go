// Package jobdriver is the platform's built-in backup driver for strategy
// kind "Job" (contract k7, contracts/schemas/v1alpha1/k7-backup-driver.md,
// "Runs", "Restores", "Retention"): it runs one batch/v1 Job per backup and
// per restore from templates in the strategy's parameters, and knows no
// vendor types. It is built on sdk/backup/driver and passes
// sdk/backup/conformance.
//
// Parameters (decoded strictly: an unknown key at any depth fails the run
// InvalidParameters naming it):
//
//	backup:     {metadata: {labels, annotations}, spec: <batch/v1 JobSpec>}  required for backups
//	restore:    the same, required for restores
//	cleanup:    the same, optional: run by Reclaim before a Backup goes
//	driverData: {key: template}  recorded in the Backup's spec.driverData
//	restoreOverlay: {...}  a JSON merge patch whose strings are templates,
//	            recorded in the Backup's spec.restoreOverlay: the core
//	            applies it to the captured spec of a new application
//	secrets:    [name]  Secrets of the class's own namespace copied into
//	            the application's namespace for the Job (data .Secrets.<name>)
//
// Every string value of a template is a text/template (missingkey=error)
// over the data of TemplateData; only strings are templates, so nothing a
// tenant writes (the application's name, its spec in .Snapshot) can add a
// field, volume or container to the Job the operator's class describes.
// Everything is rendered before anything is created: a template that does
// not parse or execute fails the run TemplateError naming its field, and no
// Job exists.
//
// What a class may ask for (contract k7, "Tenant isolation"; docs/operator/backups.md,
// "Backups"), checked after rendering and before anything is created:
//   - every pod passes Pod Security "restricted" (latest), evaluated with
//     k8s.io/pod-security-admission whatever the namespace's labels; fields
//     the class leaves unset get restricted's defaults (runAsNonRoot,
//     seccompProfile RuntimeDefault, allowPrivilegeEscalation false,
//     capabilities drop ALL); a pod asking for more fails the run
//     PodSecurityViolation naming the fields (podsecurity.go);
//   - pods run as ServiceAccount "cozy-backup-job" of the application's
//     namespace, which the driver makes (no RoleBinding, no token); a class
//     naming another ServiceAccount, or asking for a token, is refused the
//     same way;
//   - secrets come only from the namespace the class's label
//     backups.cozystack.io/class-namespace names, which the platform sets
//     to the namespace of the ServiceAccount that wrote the class (a
//     catalog component's installer), and only when a Package owns that
//     namespace: never the system's, a tenant's or Helm's release storage,
//     never an API token or a Helm record; else SecretNotAllowed naming the
//     Secret, the class and its owner (secrets.go).
//
// A backup's Job is named "<BackupJob>-backup", kept until its Backup is
// reclaimed (its logs are the backup's record) and deleted by Reclaim, which
// first runs the cleanup Job "<Backup>-cleanup" when the class has one. A
// restore's Job "<RestoreJob>-restore" is owned by its RestoreJob. Progress
// is the Job's active/succeeded/failed counts; the run succeeds on the Job's
// condition Complete and fails BackendFailed on Failed. spec.cancel deletes
// the run's Jobs and Secrets.
package jobdriver
