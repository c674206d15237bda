// Package v1alpha1 holds the types of the API group backups.cozystack.io,
// version v1alpha1: the public half of the backup-driver contract
// (contracts/schemas/v1alpha1/k7-backup-driver.md). The platform's backup
// core and every backup driver, in the platform or in a catalog, read and
// write these types and nothing else of each other.
//
// Kinds: BackupClass and BackupDriver (cluster-scoped); Plan, BackupJob,
// Backup, RestoreJob and BackupGrant (namespaced). Who writes which field
// is stated on each field: "core" is the platform's backup core
// (cozystack-controller), "driver" the driver the job is bound to.
//
// +kubebuilder:object:generate=true
// +groupName=backups.cozystack.io
package v1alpha1
