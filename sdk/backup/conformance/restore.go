package conformance

import (
	"slices"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// testRestoreNewApplication: a RestoreJob of mode NewApplication restores
// into the new application (the core created it and wrote
// status.targetRef) with RestoreToNew, or fails CapabilityMissing without;
// the Backup and the job that took it are never touched (contract k7,
// "Restores").
func testRestoreNewApplication(t *testing.T, e *env) {
	ns := e.testNamespace(t)
	e.replica(t, "restore-0", nil)
	job, b := e.succeededBackup(t, ns, "source")
	rj := &v1alpha1.RestoreJob{
		ObjectMeta: metav1.ObjectMeta{Name: "to-new", Namespace: ns, Labels: map[string]string{v1alpha1.LabelDriver: e.s.Driver}},
		Spec: v1alpha1.RestoreJobSpec{
			BackupRef: v1alpha1.BackupRef{Name: b.Name},
			Target:    v1alpha1.RestoreTarget{Mode: v1alpha1.RestoreNewApplication, ApplicationName: app.Name + "-restored"},
		},
	}
	if err := e.c.Create(e.ctx(t), rj); err != nil {
		t.Fatalf("create RestoreJob: %v", err)
	}
	target := b.Spec.ApplicationRef
	target.Name = rj.Spec.Target.ApplicationName
	e.bind(t, rj, b.Spec.DriverRef.Name, b.Spec.Strategy.Parameters, nil, target)

	if !slices.Contains(e.capabilities(t), v1alpha1.CapabilityRestoreToNew) {
		done := e.waitRestorePhase(t, ns, rj.Name, v1alpha1.PhaseFailed)
		checkReady(t, done.Status.Conditions, metav1.ConditionFalse, v1alpha1.ReasonCapabilityMissing, string(v1alpha1.CapabilityRestoreToNew))
		if objs := e.backend(t, done.UID); len(objs) > 0 {
			t.Errorf("a refused restore created %d backend objects", len(objs))
		}
	} else {
		done := e.waitRestorePhase(t, ns, rj.Name, v1alpha1.PhaseSucceeded)
		checkReady(t, done.Status.Conditions, metav1.ConditionTrue, v1alpha1.ReasonSucceeded)
		if e.s.CheckRestore != nil {
			if err := e.s.CheckRestore(e.ctx(t), e.c, done, e.backend(t, done.UID)); err != nil {
				t.Errorf("restore into %s: %v", target.Name, err)
			}
		}
	}
	after := &v1alpha1.Backup{}
	if err := e.c.Get(e.ctx(t), types.NamespacedName{Namespace: ns, Name: b.Name}, after); err != nil {
		t.Fatalf("the source Backup: %v", err)
	}
	if !apiequality.Semantic.DeepEqual(after.Spec, b.Spec) || after.DeletionTimestamp != nil {
		t.Errorf("the restore changed the source Backup %s", b.Name)
	}
	if got := e.getBackupJob(t, ns, job.Name); got.ResourceVersion != job.ResourceVersion {
		t.Errorf("the restore changed the source BackupJob %s", job.Name)
	}
}
