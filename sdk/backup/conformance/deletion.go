package conformance

import (
	"context"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// testDeletion: a job's backend objects go with it unless it produced a
// Backup, which then keeps them; a later job of the same name neither
// adopts nor conflicts with what an earlier one left (contract k7,
// "Deletion").
func testDeletion(t *testing.T, e *env) {
	t.Run("running-job-leaves-no-backend-object", func(t *testing.T) {
		ns := e.testNamespace(t)
		e.replica(t, "deletion-0", nil)
		job := e.backupJob(t, ns, "deleted-running", e.s.Driver, e.s.Parameters, true)
		e.poll(t, "the run running with a backend object", func(ctx context.Context) (bool, error) {
			j := e.getBackupJob(t, ns, job.Name)
			return j.Status.Phase == v1alpha1.PhaseRunning && len(e.backend(t, j.UID)) > 0, nil
		})
		got := e.getBackupJob(t, ns, job.Name)
		if !slices.Contains(got.Finalizers, v1alpha1.JobFinalizer) {
			t.Errorf("running job %s has finalizers %v, want %s (added at claim)", job.Name, got.Finalizers, v1alpha1.JobFinalizer)
		}
		e.deleteAndWait(t, got)
		e.poll(t, "no backend object of the deleted job "+job.Name, func(ctx context.Context) (bool, error) {
			return len(e.backend(t, job.UID)) == 0, nil
		})

		// The name is free again: a new job of that name runs to success
		// without meeting anything of the first.
		again, _ := e.succeededBackup(t, ns, job.Name)
		if again.UID == job.UID {
			t.Fatalf("the second job %s has the first's UID", again.Name)
		}
		if objs := e.backend(t, job.UID); len(objs) > 0 {
			t.Errorf("the first job's backend object %s came back", objs[0].GetName())
		}
	})

	t.Run("leftover-of-an-earlier-job-is-not-a-conflict", func(t *testing.T) {
		if e.s.Squat == nil {
			t.Skip("Setup.Squat is nil")
		}
		ns := e.testNamespace(t)
		job := e.backupJob(t, ns, "reused-name", e.s.Driver, e.s.Parameters, false)
		// What a job of this name deleted without cleanup (an older
		// driver, a finalizer removed by hand) left: the driver's labels
		// with the earlier run's UID, the annotation naming the job.
		earlier := types.UID("00000000-0000-4000-8000-" + rand.String(12))
		left := e.s.Squat(job)
		left.SetLabels(map[string]string{v1alpha1.LabelRun: string(earlier), v1alpha1.LabelDriver: e.s.Driver})
		left.SetAnnotations(map[string]string{driver.AnnotationJob: "BackupJob/" + ns + "/" + job.Name})
		if err := e.c.Create(e.ctx(t), left); err != nil {
			t.Fatalf("create the leftover %s: %v", left.GetName(), err)
		}
		e.replica(t, "deletion-1", nil)
		e.bind(t, job, e.s.Driver, e.s.Parameters, snapshot())
		done := e.waitBackupPhase(t, ns, job.Name, v1alpha1.PhaseSucceeded, job.UID)
		checkReady(t, done.Status.Conditions, metav1.ConditionTrue, v1alpha1.ReasonSucceeded)
		e.poll(t, "the leftover of the earlier job gone", func(ctx context.Context) (bool, error) {
			return len(e.backend(t, earlier)) == 0, nil
		})
	})

	t.Run("succeeded-job-deleted-keeps-its-backup", func(t *testing.T) {
		ns := e.testNamespace(t)
		e.replica(t, "deletion-2", nil)
		job, b := e.succeededBackup(t, ns, "deleted-after-success")
		before := e.backend(t, job.UID)
		e.deleteAndWait(t, e.getBackupJob(t, ns, job.Name))
		after := &v1alpha1.Backup{}
		if err := e.c.Get(e.ctx(t), types.NamespacedName{Namespace: ns, Name: b.Name}, after); err != nil || after.DeletionTimestamp != nil {
			t.Fatalf("Backup %s after its job was deleted: %v (deleting: %v)", b.Name, err, after.DeletionTimestamp != nil)
		}
		objs := e.backend(t, job.UID)
		if len(objs) != len(before) {
			t.Errorf("deleting the succeeded job changed its backend objects from %d to %d: the Backup keeps them", len(before), len(objs))
		}
		// Nothing left is owned by the deleted job (the garbage collector
		// would take it): ownership moved to the Backup.
		for _, o := range objs {
			for _, ref := range o.GetOwnerReferences() {
				if ref.UID == job.UID {
					t.Errorf("backend object %s is still owned by the deleted job %s", o.GetName(), job.Name)
				}
			}
		}
	})
}

// deleteAndWait deletes obj and waits until it is gone (its finalizers
// released).
func (e *env) deleteAndWait(t *testing.T, obj client.Object) {
	t.Helper()
	if err := e.c.Delete(e.ctx(t), obj); err != nil {
		t.Fatalf("delete %s: %v", obj.GetName(), err)
	}
	key := client.ObjectKeyFromObject(obj)
	e.poll(t, obj.GetName()+" gone after its deletion", func(ctx context.Context) (bool, error) {
		err := e.c.Get(ctx, key, obj.DeepCopyObject().(client.Object))
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
