package conformance

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	snap "cozystack.io/sdk/backup/snapshot"
)

// testIdempotency: lost responses and refused writes never make a second
// backend object or a failure; an object the run did not create is a
// conflict naming it (contract k7, "Idempotency").
func testIdempotency(t *testing.T, e *env) {
	t.Run("injected-conflicts", func(t *testing.T) {
		ns := e.testNamespace(t)
		f := newFaults()
		e.replica(t, "idempotency-0", f.wrap)
		job, b := e.succeededBackup(t, ns, "flaky")
		if f.count("create") == 0 || f.count("status") == 0 {
			t.Fatalf("no fault was injected (creates %d, status writes %d): the driver must use the client it is given",
				f.count("create"), f.count("status"))
		}
		if n := len(e.backend(t, job.UID)); n != 1 {
			t.Errorf("the run has %d backend objects, want 1", n)
		}
		var list v1alpha1.BackupList
		if err := e.c.List(e.ctx(t), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != b.Name {
			t.Errorf("got %d Backups, want exactly %s", len(list.Items), b.Name)
		}
		if b.Labels[v1alpha1.LabelRun] != string(job.UID) || b.Spec.BackupJobName != job.Name || b.Spec.PlanName != "nightly" || b.Spec.BackupClassName != "conformance" {
			t.Errorf("Backup %s: labels %v, job %q, plan %q; want run %s, job %s, plan nightly",
				b.Name, b.Labels, b.Spec.BackupJobName, b.Spec.PlanName, job.UID, job.Name)
		}
		if got := b.Labels[v1alpha1.LabelPlanUID]; got != string(planUID) {
			t.Errorf("Backup %s: label %s %q, want the job's status.planUID %s (contract k7, \"Retention\")", b.Name, v1alpha1.LabelPlanUID, got, planUID)
		}
		if b.Spec.DriverRef.Name != e.s.Driver {
			t.Errorf("Backup %s lacks the job's driver: %+v", b.Name, b.Spec)
		}
		// The job's snapshot reference, copied, never the values
		// (contract k7, "Snapshots").
		if b.Spec.ApplicationSnapshot != nil {
			t.Errorf("Backup %s holds the application's values inline (%d bytes); it must carry the job's spec.applicationSnapshotRef only", b.Name, len(b.Spec.ApplicationSnapshot.Raw))
		}
		got, err := snap.ForBackup(e.ctx(t), e.c, b)
		if err != nil || got == nil || string(got.Raw) != `{"replicas":1,"version":"16"}` {
			t.Errorf("Backup %s's application snapshot %v (error %v), want the job's {\"replicas\":1,\"version\":\"16\"}", b.Name, got, err)
		}
	})

	t.Run("foreign-object-is-a-conflict", func(t *testing.T) {
		if e.s.Squat == nil {
			t.Skip("Setup.Squat is nil")
		}
		ns := e.testNamespace(t)
		// The job is created unbound first so the squatter can be made
		// from it before the driver may act.
		job := e.backupJob(t, ns, "squatted", e.s.Driver, e.s.Parameters, false)
		sq := e.s.Squat(job)
		if err := e.c.Create(e.ctx(t), sq); err != nil {
			t.Fatalf("create squatter %s: %v", sq.GetName(), err)
		}
		e.replica(t, "idempotency-1", nil)
		e.bind(t, job, e.s.Driver, e.s.Parameters, snapshot())
		done := e.waitBackupPhase(t, ns, job.Name, v1alpha1.PhaseFailed)
		checkReady(t, done.Status.Conditions, metav1.ConditionFalse, v1alpha1.ReasonBackendFailed, sq.GetName())
		got := sq.DeepCopyObject().(client.Object)
		if err := e.c.Get(e.ctx(t), types.NamespacedName{Namespace: sq.GetNamespace(), Name: sq.GetName()}, got); err != nil {
			t.Fatalf("the squatter is gone: %v", err)
		}
		if got.GetLabels()[v1alpha1.LabelRun] != "" {
			t.Errorf("the driver labelled the squatter as its own: %v", got.GetLabels())
		}
	})
}
