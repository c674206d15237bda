// Package mariadbdriver is the MariaDB backup driver of the services
// catalog: it serves the strategy kind MariaDB of contract k7
// (contracts/schemas/v1alpha1/k7-backup-driver.md) for MariaDB
// applications, on the driver runtime cozystack.io/sdk/backup/driver, with
// the capabilities Reclaim and RestoreToNew. It imports only
// cozystack.io/sdk and Kubernetes libraries: the mariadb-operator's Go API
// module is not available to this catalog, so its k8s.mariadb.com/v1alpha1
// Backup, Restore and MariaDB are unstructured objects whose field names
// follow the operator's CRDs (the catalog installs them from crds.yaml's
// mirror source; the tests check every object the driver writes against
// the upstream CRD with a strict server-side dry-run or create).
//
// Parameters (the BackupClass strategy's; decoded strictly, an unknown key
// is InvalidParameters naming it; exactly one storage target):
//
//	s3:                                # an S3-compatible bucket
//	  bucket: backups                  # required
//	  endpoint: s3.example:9000        # required, no scheme
//	  region: eu-west-1                # optional
//	  prefix: "mariadb/{{ .Application }}"  # template over {Namespace, Application, Job}
//	  credentialsSecret: s3-creds      # required: a Secret in the driver's namespace
//	                                   # with keys access-key-id, secret-access-key
//	  tls: true                        # optional
//	persistentVolumeClaim:             # or a PVC per backup, made by the operator
//	  size: 10Gi                       # required
//	  storageClassName: fast           # optional
//	compression: gzip                  # none | bzip2 | gzip, optional
//	maxRetention: 720h                 # the operator's own file cleanup, optional
//	waitTimeout: 10m                   # bound of the operator's waiting states, default 10m
//
// Backup ("Runs"). The application's MariaDB is the one charts/mariadb
// renders for it: named after its HelmRelease, ReleasePrefix + application
// name (applicationdefinitions/mariadb.yaml, charts/mariadb/templates/
// mariadb.yaml). Each run creates, with Run.CreateOrAdopt, one one-off
// k8s.mariadb.com Backup named ObjectName(job, "backup") in the
// application's namespace, with spec.mariaDbRef naming that MariaDB and
// spec.storage the target. With s3, the run writes under
// "<prefix>/<namespace>/<Backup name>", a folder of its own, so a restore
// of this Backup finds this backup and no other, and the operator's
// maxRetention cleanup never touches another run's files; the credentials
// are projected into the namespace (Run.ProjectSecret, named
// ObjectName(job, "cred-<secret>")) and the copy is owned by both the
// BackupJob and the k8s.mariadb.com Backup, which reads it again at
// restore time. On success the Backup's driverData is DriverData
// {backup, mariadb, storage ("s3://bucket/prefix" or "pvc")} and its
// restoreOverlay is RestoreOverlay.
//
// States. The operator reports a Backup's and a Restore's state in one
// condition, Complete; ClassifyComplete maps every state in
// CompleteStates, and a state not listed (a newer operator, status
// Unknown) as Waiting:
//
//	Complete=True  JobComplete                   Succeeded
//	Complete=True  JobFailed                     Failed, BackendFailed (the Job's backoffLimit is spent)
//	Complete=False JobRunning                    running, progress
//	Complete=False JobSuspended, Failed          waiting (the operator retries: "MariaDB not found",
//	                                             "MariaDB not ready", "Error creating Job")
//	no Complete condition, unknown states        waiting
//	Complete=* CronJobScheduled|CronJobRunning|CronJobSucess
//	                                             Failed: a schedule was added to a one-off Backup
//
// A waiting state older than waitTimeout (since its lastTransitionTime, or
// the object's creation) fails the run BackendFailed, so no state waits
// forever even before the core's stallTimeout. The list of states is taken
// from the mariadb-operator's source, not from its CRD: the CRD's status
// conditions are plain metav1.Condition (type, status, reason with the
// metav1 patterns, status enum True|False|Unknown) and enumerate no
// reason. The sources are the operator's api/v1alpha1/condition_types.go
// (ConditionTypeComplete, ConditionReasonJobComplete, ...JobFailed,
// ...JobRunning, ...JobSuspended, ...Failed, ...CronJob*; the misspelling
// "CronJobSucess" is the operator's) and pkg/condition/complete.go and
// condition.go (which status goes with which reason); the CRD's printer
// columns confirm the condition types (Complete on Backup and Restore,
// Ready on MariaDB). The tests check every mapped type, status and reason
// against the upstream CRD's condition schema (the status enum, the type
// and reason patterns, the printer columns' types).
//
// Restore ("Restores"). NewApplication: the core creates the application
// from the captured spec with the Backup's restoreOverlay,
// {"bootstrap": {"backupName": <k8s.mariadb.com Backup>}}, which makes
// charts/mariadb render spec.bootstrapFrom.backupRef; the operator then
// restores the new MariaDB from that Backup. ReconcileRestore waits for the
// MariaDB: missing (not yet installed) or not yet restoring is waiting;
// Ready=False RestoreBackup or BackupRestored=False is running; condition
// BackupRestored=True with Ready=True succeeds (ClassifyRestoredMariaDB).
// A MariaDB that does not bootstrap from this Backup fails the run
// BackendFailed. InPlace: a k8s.mariadb.com Restore named
// ObjectName(restorejob, "restore"), owned by the RestoreJob, of the
// application's MariaDB from the Backup's k8s.mariadb.com Backup, mapped by
// ClassifyComplete. Both need the Backup in the RestoreJob's namespace (the
// operator resolves backupRef in its own namespace); a RestoreJob reading
// a Backup of another namespace fails BackendFailed saying so.
//
// Reclaim ("Retention") deletes the k8s.mariadb.com Backup and Restore
// objects and the Secrets of the Backup's run. With persistentVolumeClaim
// the operator's PVC is owned by its Backup, so the data goes with it
// (as the volume's reclaim policy says). With s3 the files stay in the
// bucket: the operator deletes no stored backup when a Backup object is
// deleted; expire them with the bucket's lifecycle rules (the run's folder
// is "<prefix>/<namespace>/<Backup name>"). Cancel deletes the same
// objects of the job's run.
//
// Errors: parameters → InvalidParameters (ParameterError) or TemplateError
// (the prefix template); a missing credentials Secret, an object the API
// server refuses, a failed or too long waiting operator state →
// BackendFailed; an object of the derived name not made by the run →
// BackendFailed (driver.ConflictError). Everything else is retried.
package mariadbdriver
