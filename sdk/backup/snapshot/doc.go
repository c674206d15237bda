// Package snapshot stores and reads the application snapshots of
// backups.cozystack.io (contract k7, "Snapshots"): the spec of the
// application a BackupJob backs up, captured by the core when it binds the
// job and used by a restore to a new application and by drivers that
// select what to back up from it.
//
// A job's status and a Backup's spec carry only a v1alpha1.SnapshotRef:
// the HelmRelease's name and generation, the sha256 digest of the values
// and the name of a ConfigMap in the same namespace that holds the values
// once per distinct digest (Name). Everyone reads the values through
// Resolve (or ForJob, ForBackup), which verifies the digest: a ConfigMap
// whose bytes do not match the reference is an *IntegrityError naming both
// digests, never values to restore from. Objects written by an earlier
// release carry the values inline (the deprecated applicationSnapshot
// fields); Resolve returns those when there is no reference.
//
// The values are at most MaxBytes in canonical form (the 1 MiB a
// ConfigMap holds): a larger application cannot be snapshotted, and the
// core fails its job with reason SnapshotTooLarge.
package snapshot
