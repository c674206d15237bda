package conformance

import (
	"context"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// testCleanup: deleting a Backup of a driver with Reclaim removes its
// backend objects before the Backup goes; a driver without Reclaim puts no
// finalizer on its Backups (contract k7, "Retention").
func testCleanup(t *testing.T, e *env) {
	ns := e.testNamespace(t)
	e.replica(t, "cleanup-0", nil)
	job, b := e.succeededBackup(t, ns, "to-reclaim")
	reclaim := slices.Contains(e.capabilities(t), v1alpha1.CapabilityReclaim)
	if has := slices.Contains(b.Finalizers, v1alpha1.BackupFinalizer); has != reclaim {
		t.Fatalf("Backup %s finalizers %v; want %s exactly when the driver has Reclaim (%v)", b.Name, b.Finalizers, v1alpha1.BackupFinalizer, reclaim)
	}
	if err := e.c.Delete(e.ctx(t), b); err != nil {
		t.Fatalf("delete Backup: %v", err)
	}
	// Objects the reclaim creates carry the Backup's UID as run.
	e.poll(t, "Backup "+b.Name+" reclaimed and gone", func(ctx context.Context) (bool, error) {
		err := e.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: b.Name}, &v1alpha1.Backup{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return false, e.completeRuns(ctx, b.UID)
	})
	if !reclaim {
		return
	}
	// Objects owned by the Backup go with it through garbage collection,
	// which is asynchronous: poll.
	for _, run := range []types.UID{job.UID, b.UID} {
		e.poll(t, "no backend objects of run "+string(run)+" after the reclaim", func(ctx context.Context) (bool, error) {
			return len(e.backend(t, run)) == 0, nil
		})
	}
}
