package conformance

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// testCancel: spec.cancel stops a running backup, removes what it created,
// and ends it Cancelled (contract k7, "Runs").
func testCancel(t *testing.T, e *env) {
	ns := e.testNamespace(t)
	e.replica(t, "cancel-0", nil)
	job := e.backupJob(t, ns, "to-cancel", e.s.Driver, e.s.Parameters, true)
	e.poll(t, "the run running with a backend object", func(ctx context.Context) (bool, error) {
		j := e.getBackupJob(t, ns, job.Name)
		return j.Status.Phase == v1alpha1.PhaseRunning && len(e.backend(t, j.UID)) > 0, nil
	})
	got := e.getBackupJob(t, ns, job.Name)
	patch := client.MergeFrom(got.DeepCopy())
	got.Spec.Cancel = true
	if err := e.c.Patch(e.ctx(t), got, patch); err != nil {
		t.Fatalf("set spec.cancel: %v", err)
	}
	done := e.waitBackupPhase(t, ns, job.Name, v1alpha1.PhaseCancelled)
	checkReady(t, done.Status.Conditions, metav1.ConditionFalse, v1alpha1.ReasonCancelled)
	if done.Status.CompletionTime == nil {
		t.Error("a cancelled job has no completionTime")
	}
	if objs := e.backend(t, job.UID); len(objs) > 0 {
		t.Errorf("cancelled run still has %d backend objects, e.g. %s", len(objs), objs[0].GetName())
	}
	if done.Status.BackupName != "" {
		t.Errorf("cancelled run named Backup %s", done.Status.BackupName)
	}
}
