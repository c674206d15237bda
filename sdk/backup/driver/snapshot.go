package driver

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/snapshot"
)

// Snapshot returns the application's spec the core captured when it bound
// the job (status.applicationSnapshotRef, read and verified with
// cozystack.io/sdk/backup/snapshot; the inline values of a job an earlier
// release bound), or nil when the job has none. The driver's identity
// needs get on ConfigMaps in the job's namespace. A snapshot that does
// not match its digest, or whose ConfigMap is gone, ends the run with
// BackendFailed (a *RunError naming the ConfigMap and the digests); other
// errors are the read's, retried.
func (r *BackupRun) Snapshot(ctx context.Context) (*v1alpha1.RawSpec, error) {
	return runSnapshot(snapshot.ForJob(ctx, r.Client, r.Job))
}

// Snapshot returns the application's spec captured in the Backup being
// restored, as BackupRun.Snapshot does for a job.
func (r *RestoreRun) Snapshot(ctx context.Context) (*v1alpha1.RawSpec, error) {
	return runSnapshot(snapshot.ForBackup(ctx, r.Client, r.Backup))
}

// Snapshot returns the application's spec captured in the Backup being
// reclaimed, as BackupRun.Snapshot does for a job.
func (r *ReclaimRun) Snapshot(ctx context.Context) (*v1alpha1.RawSpec, error) {
	return runSnapshot(snapshot.ForBackup(ctx, r.Client, r.Backup))
}

func runSnapshot(s *v1alpha1.RawSpec, err error) (*v1alpha1.RawSpec, error) {
	var ie *snapshot.IntegrityError
	switch {
	case err == nil:
		return s, nil
	case errors.As(err, &ie), apierrors.IsNotFound(err):
		return nil, Fail(v1alpha1.ReasonBackendFailed, "%v", err)
	}
	return nil, err
}
