package plan_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/plan"
	"cozystack.io/sdk/backup/api/v1alpha1"
)

// A BackupJob made by hand (a tenant's `use` member may create them) and
// labelled backups.cozystack.io/plan=<plan>, even with a controller
// ownerReference to the Plan forged in, is not the Plan's: the core never
// records the Plan's UID in its status.planUID, so its Backup carries no
// backups.cozystack.io/plan-uid, and the Plan's retention (keepLast 1)
// neither counts it nor, being pushed by it, deletes the Plan's only real
// Backup (contract k7, "Retention"). The Plan's own job gets the Plan's
// UID in its status.
func TestRetentionCountsOnlyThePlansJobs(t *testing.T) {
	need(t)
	ctx := backuptest.Context(t)
	ns := backuptest.TempNamespace(t, c, "plan-own-")
	driver := createDriver(t, ns, true)
	spec := planSpec("* * * * *")
	spec.Retention = &v1alpha1.Retention{KeepLast: ptr.To[int32](1)}
	p := createPlan(t, ns, "nightly", spec)
	first := firstMinute(p)
	startReconciler(t, ns, clocktesting.NewFakeClock(first))
	tick(t, p)

	// The Plan's run: its job records the Plan's UID (checked below, once
	// the attack is played out).
	own := plan.JobName(p.Name, first)
	var ownJob *v1alpha1.BackupJob
	backuptest.EventuallyEvery(t, poll, 60*time.Second, "the Plan's job", func() error {
		if ownJob = jobs(t, p)[own]; ownJob == nil {
			return fmt.Errorf("no job %s yet", own)
		}
		return nil
	})
	for end := time.Now().Add(5 * time.Second); ownJob.Status.PlanUID == "" && time.Now().Before(end); time.Sleep(poll) {
		ownJob = jobs(t, p)[own]
	}
	// Its Backup, as the driver makes it from the job (sdk/backup/driver:
	// labels plan from the job's label, plan-uid from its status).
	createBackupLabelled(t, ns, own, driver, first, true, map[string]string{
		v1alpha1.LabelPlan: ownJob.Labels[v1alpha1.LabelPlan], v1alpha1.LabelPlanUID: string(ownJob.Status.PlanUID), v1alpha1.LabelDriver: driver})

	// The hand-made job, labelled with the Plan and claiming to be
	// controlled by it.
	hand := &v1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-hand", Labels: map[string]string{v1alpha1.LabelPlan: p.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Plan", Name: p.Name, UID: p.UID,
				Controller: ptr.To(true)}}},
		Spec: v1alpha1.BackupJobSpec{ApplicationRef: spec.ApplicationRef, BackupClassName: spec.BackupClassName},
	}
	if err := c.Create(ctx, hand); err != nil {
		t.Fatal(err)
	}
	tick(t, p)
	waitPlan(t, p, "a pass after the hand-made job", func(got *v1alpha1.Plan) error {
		return conditionIs(got, v1alpha1.ConditionRetention, metav1.ConditionTrue, v1alpha1.ReasonRetentionApplied, "keeps 1 of 1")
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(hand), hand); err != nil {
		t.Fatal(err)
	}
	if hand.Status.PlanUID != "" {
		t.Fatalf("the hand-made job got status.planUID %s: the core recorded a job it did not create", hand.Status.PlanUID)
	}
	// Nor does it take one of the Plan's concurrency slots.
	if active := getPlan(t, p).Status.Active; len(active) != 1 || active[0] != own {
		t.Errorf("Plan status.active %v, want only its own job %s", active, own)
	}
	// Its Backup, newer, as the driver makes it: no plan-uid, since the
	// job's status has none.
	createBackupLabelled(t, ns, hand.Name, driver, first.Add(time.Hour), true, map[string]string{
		v1alpha1.LabelPlan: hand.Labels[v1alpha1.LabelPlan], v1alpha1.LabelDriver: driver})

	tick(t, p)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		live, terminating := backups(t, ns)
		if len(terminating) > 0 {
			t.Fatalf("retention deleted %v (live %v): a hand-labelled job's Backup counted as the Plan's", terminating, live)
		}
		time.Sleep(poll)
	}
	waitPlan(t, p, "retention over the Plan's own Backups only", func(got *v1alpha1.Plan) error {
		return conditionIs(got, v1alpha1.ConditionRetention, metav1.ConditionTrue, v1alpha1.ReasonRetentionApplied, "keeps 1 of 1")
	})
	if live, terminating := backups(t, ns); len(live) != 2 || len(terminating) != 0 {
		t.Errorf("Backups live %v, being deleted %v; want both kept", live, terminating)
	}
	if ownJob.Status.PlanUID != p.UID {
		t.Errorf("the Plan's job %s: status.planUID %q, want the Plan's UID %s", own, ownJob.Status.PlanUID, p.UID)
	}
}
