// Package backupaccess holds the platform's admission policies on backup
// driver registrations (contract k7,
// contracts/schemas/v1alpha1/k7-backup-driver.md, "Registration";
// policy.yaml): the creator of a BackupDriver is recorded in its
// annotation backups.cozystack.io/registered-by, which nobody can write,
// and only that user, a cluster admin or the platform may change or delete
// it; only the platform registers the built-in Job driver. The platform
// decides from that annotation which catalog a registration belongs to
// (platform/internal/backup/drivers, Accept). cozystack-controller applies
// the policies at start, and --install-crds with the backup CRDs (Apply).
package backupaccess
