package binder_test

import (
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/binder"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// While a job waits its DriverBound stays False and its Reconciling True
// whatever the cause, so their lastTransitionTime stays while reason and
// message follow the cause (contracts/schemas/v1alpha1/k7-backup-driver.md,
// "Field managers").
func TestTransitionTimeHoldsWhileTheCauseChanges(t *testing.T) {
	need(t)
	clk := backuptest.FakeClock()
	startBinder(t, binder.Options{Clock: clk, Resync: 200 * time.Millisecond})
	ns := backuptest.Namespace(t, c, "binder-transition")
	pending := expect{status: metav1.ConditionFalse, phase: backupsv1alpha1.PhasePending}

	j := backupJob(t, ns, "db-transition", appKind, "db-transition", "bn-transition")
	pending.reason, pending.message = backupsv1alpha1.ReasonClassNotFound, []string{"BackupClass bn-transition does not exist"}
	first := waitFor(t, j, pending)
	bound := *apimeta.FindStatusCondition(first.Status.Conditions, backupsv1alpha1.ConditionDriverBound)
	reconciling := apimeta.FindStatusCondition(first.Status.Conditions, backupsv1alpha1.ConditionReconciling)
	if reconciling == nil || reconciling.Status != metav1.ConditionTrue {
		t.Fatalf("Reconciling %s, want True while the job waits", backuptest.ShowCondition(reconciling))
	}

	// A later cause, on a later clock and a later wall-clock second
	// (transition times have second precision): the application is
	// missing now.
	time.Sleep(1100 * time.Millisecond)
	clk.Step(time.Minute)
	backuptest.RegisterDriver(t, c, "bn-transition", []string{"BnTransition"}, v1, clk.Now(), 3600)
	class(t, "bn-transition", appKind, "BnTransition", nil)
	pending.reason, pending.message = backupsv1alpha1.ReasonApplicationNotFound, []string{"application Postgres db-transition"}
	got := waitFor(t, j, pending)

	now := apimeta.FindStatusCondition(got.Status.Conditions, backupsv1alpha1.ConditionDriverBound)
	if !now.LastTransitionTime.Equal(&bound.LastTransitionTime) {
		t.Errorf("DriverBound lastTransitionTime moved from %v to %v with the reason (%s to %s); the status stayed False",
			bound.LastTransitionTime, now.LastTransitionTime, bound.Reason, now.Reason)
	}
	r := apimeta.FindStatusCondition(got.Status.Conditions, backupsv1alpha1.ConditionReconciling)
	if r == nil {
		t.Fatal("Reconciling is gone while the job waits")
	}
	if r.Status != metav1.ConditionTrue || !r.LastTransitionTime.Equal(&reconciling.LastTransitionTime) ||
		!strings.Contains(r.Message, backupsv1alpha1.ReasonApplicationNotFound) {
		t.Errorf("Reconciling %s (lastTransitionTime %v), want True since %v, naming %s",
			backuptest.ShowCondition(r), r.LastTransitionTime, reconciling.LastTransitionTime, backupsv1alpha1.ReasonApplicationNotFound)
	}
}
