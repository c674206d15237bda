// Package cnpgdriver is the CloudNativePG backup driver of the services
// catalog: it serves the strategy kind CNPG of contract k7
// (contracts/schemas/v1alpha1/k7-backup-driver.md) for Postgres
// applications, on the driver runtime cozystack.io/sdk/backup/driver, with
// the capabilities Reclaim, RestoreToNew and PointInTime.
//
// Parameters (the BackupClass strategy's; decoded strictly, an unknown key
// is InvalidParameters naming it):
//
//	method: barmanObjectStore | volumeSnapshot   # default barmanObjectStore
//	barmanObjectStore:                           # required with barmanObjectStore, refused with volumeSnapshot
//	  destinationPath: s3://bucket/path          # required
//	  endpointURL: https://s3.example            # optional
//	  credentialsSecret: s3-creds                # required: a Secret in the driver's namespace
//	                                             # with keys ACCESS_KEY_ID and ACCESS_SECRET_KEY
//	volumeSnapshot:                              # optional with volumeSnapshot, refused with barmanObjectStore
//	  className: csi-snapclass                   # optional: the VolumeSnapshotClass; default the cluster's default
//	  online: false                              # optional: hot (true) or cold (false) snapshots; default CNPG's (hot)
//	waitTimeout: 10m                             # bound of CNPG's waiting phases, default 10m
//
// Online (hot) volume snapshots need the Cluster's WAL archiving, which
// only an object store gives (a class of method barmanObjectStore points
// the Cluster at one; both sections then stay on the Cluster). Without
// one, take cold snapshots (online: false): CNPG takes them on a standby
// when the Postgres has replicas, else it stops the primary for the
// snapshot. The chart's class postgres has {method: volumeSnapshot,
// volumeSnapshot: {online: false}}.
//
// Backup ("Runs"). The application's CNPG Cluster is the one the postgres
// chart renders for it: named after its HelmRelease, ReleasePrefix +
// application name (catalogs/services/applicationdefinitions/postgres.yaml,
// charts/postgres/templates/cluster.yaml). A missing Cluster is waited for
// (progress says so; the core's stallTimeout bounds it). With
// barmanObjectStore the credentials are projected into the application's
// namespace as "<cluster>-backup-credentials" (driver.ProjectSecret, owned
// by the Cluster, which archives WAL with them between backups; its run
// label is the Cluster's UID so every backup adopts it) and the Cluster's
// spec.backup.barmanObjectStore is set to the target by server-side apply
// under the driver's field manager: CNPG takes a Backup's object store from
// its Cluster, a Backup object has no destination of its own. The target
// is the namespace's own path of the store, TenantPath
// ("<destinationPath>/<namespace>"), with the Cluster's name as barman's
// serverName, so no two tenants' Clusters share a directory; the copy of
// the store's credentials is readable by no tenant group (tenants read
// Secrets only as TenantSecrets; k7-backup-driver.md, "Tenant isolation"). With
// volumeSnapshot the Cluster's spec.backup.volumeSnapshot is set the same
// way (CNPG refuses a volumeSnapshot Backup of a Cluster without it: "no
// volumeSnapshot section defined on the target cluster"): className when
// the parameters give one, else empty, so CNPG's defaults apply. Neither
// is written when already as wanted, and each apply keeps the other
// section the driver set (the driver's applied configuration is carried
// over from the Cluster's managedFields). Then one postgresql.cnpg.io/v1
// Backup per run, named ObjectName(job, "cnpg"), of the method, with
// spec.online from volumeSnapshot.online when set (unset, CNPG takes the
// Cluster's spec.backup.volumeSnapshot.online, true by default), created
// with Run.CreateOrAdopt. Its phase is mapped by Classify, every
// phase of the CNPG API module (a test parses the module's source):
//
//	"" pending walArchivingFailing  waiting: running, failed BackendFailed after waitTimeout
//	started running finalizing      running with progress
//	completed                       Succeeded: DriverData and a RestoreOverlay
//	failed                          Failed BackendFailed with CNPG's error
//
// A phase the module does not list (a newer operator) counts as waiting,
// so it is bounded too.
//
// Restore ("Restores"). InPlace is refused (Failed, CapabilityMissing): CNPG
// bootstraps a Cluster from a backup only when it creates it; it cannot
// restore into a running Cluster. NewApplication: the Backup's
// spec.restoreOverlay is postgres chart values (RestoreOverlay) that make
// the new application's Cluster bootstrap with bootstrap.recovery: from
// the object store through externalClusters (any namespace; the chart
// reads credentials from the Secret "<release>-recovery-credentials",
// which ReconcileRestore projects into the RestoreJob's namespace once the
// core has bound the run, i.e. after its BackupGrant check; the source's
// own path and serverName come from the Backup's driverData), or from
// the CNPG Backup by name for volumeSnapshot backups (same namespace only).
// ReconcileRestore then waits for the new Cluster to report Ready (its
// condition Ready, or phase "Cluster in healthy state" with every instance
// ready) and succeeds; a Cluster without bootstrap.recovery fails the run
// BackendFailed (it was not made from the Backup's overlay).
//
// PointInTime: the chart takes bootstrap.recovery.targetTime; a RestoreJob
// has no time field yet, so every restore recovers to the end of the
// backup's WALs (or the end of the archive).
//
// Reclaim ("Retention") deletes the CNPG Backup objects of the run. CNPG
// never deletes object-store data when a Backup object is deleted: the
// data stays until the Cluster's retentionPolicy (or the bucket's own
// lifecycle) removes it. Cancel deletes the run's CNPG Backup (CNPG does
// not abort a barman backup already running; its data is left as above).
package cnpgdriver
