package plan_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// The acceptance set of package retention (retention_test.go, row
// acceptance-40-daily-keepDaily7-keepWeekly4): 40 Backups one a day at
// 03:00 UTC from 2026-01-01 to 2026-02-09; keepDaily 7 keeps Feb 3-9,
// keepWeekly 4 (ISO weeks) adds Feb 1 (W05) and Jan 25 (W04): 9 kept,
// the other 31 deleted.
var (
	fortyDays = func() []time.Time {
		var out []time.Time
		for i := range 40 {
			out = append(out, time.Date(2026, 1, 1+i, 3, 0, 0, 0, time.UTC))
		}
		return out
	}()
	keptDays = []string{"20260125", "20260201", "20260203", "20260204", "20260205", "20260206", "20260207", "20260208", "20260209"}
)

// Retention end to end: the test creates a BackupDriver registration and
// 40 ready Backups labelled with the Plan, as a driver would (the Backups'
// readiness written as that driver's field manager; with Reclaim, its
// finalizer on each Backup), then the Plan.
func TestRetention(t *testing.T) {
	need(t)
	for _, tc := range []struct {
		name    string
		reclaim bool
	}{
		{name: "driver-reclaims", reclaim: true},
		{name: "driver-lacks-reclaim", reclaim: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := backuptest.TempNamespace(t, c, "plan-")
			driver := createDriver(t, ns, tc.reclaim)
			const planName = "db"
			spec := planSpec("0 3 * * *")
			spec.Retention = &v1alpha1.Retention{KeepDaily: ptr.To[int32](7), KeepWeekly: ptr.To[int32](4)}
			// The Plan first (nothing reconciles it yet): its Backups
			// carry its UID.
			p := createPlan(t, ns, planName, spec)
			var wantKeep, wantDelete []string
			for _, at := range fortyDays {
				name := planName + "-" + at.Format("20060102")
				createBackup(t, ns, p, name, driver, at, tc.reclaim)
				if slices.Contains(keptDays, at.Format("20060102")) {
					wantKeep = append(wantKeep, name)
				} else {
					wantDelete = append(wantDelete, name)
				}
			}
			// A Backup that is not Ready (its run failed after the
			// driver created it) neither takes a keep slot nor is
			// deleted, though older than every other.
			createBackup(t, ns, p, brokenBackup, driver, time.Date(2025, 12, 31, 3, 0, 0, 0, time.UTC), tc.reclaim)
			setReady(t, ns, brokenBackup, driver, false)
			wantKeep = append(wantKeep, brokenBackup)
			slices.Sort(wantKeep)
			startReconciler(t, ns, clocktesting.NewFakeClock(time.Now()))

			if tc.reclaim {
				// The core deletes the 31; the driver's finalizer holds
				// them while it reclaims the data.
				waitPlan(t, p, "retention applied, Backups being reclaimed", func(p *v1alpha1.Plan) error {
					// "keeps 9 of 40" on the pass that deletes, "9 of 9"
					// once the 31 being deleted no longer count.
					if err := conditionIs(p, v1alpha1.ConditionRetention, metav1.ConditionTrue, v1alpha1.ReasonRetentionApplied, "keeps 9 of "); err != nil {
						return err
					}
					return conditionIs(p, v1alpha1.ConditionReconciling, metav1.ConditionTrue, v1alpha1.ReasonProgressing, "31 Backups are being deleted")
				})
				live, terminating := backups(t, ns)
				if diff := cmp.Diff(wantKeep, live); diff != "" {
					t.Errorf("Backups not deleted (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(wantDelete, terminating); diff != "" {
					t.Errorf("Backups deleted (-want +got):\n%s", diff)
				}
				// The driver reclaims the data and lets them go.
				for _, name := range terminating {
					releaseBackup(t, ns, name)
				}
				waitPlan(t, p, "reclaimed", func(p *v1alpha1.Plan) error {
					if c := apimeta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReconciling); c != nil {
						return fmt.Errorf("Reconciling is still there: %s", c.Message)
					}
					return conditionIs(p, v1alpha1.ConditionRetention, metav1.ConditionTrue, v1alpha1.ReasonRetentionApplied)
				})
			} else {
				got := waitPlan(t, p, "ReclaimUnsupported", func(p *v1alpha1.Plan) error {
					return conditionIs(p, v1alpha1.ConditionRetention, metav1.ConditionFalse, v1alpha1.ReasonReclaimUnsupported,
						append([]string{driver, "Reclaim", "31 Backups"}, wantDelete...)...)
				})
				t.Logf("Retention: %s", apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionRetention).Message)
				// Give the core time to (wrongly) delete, then check none
				// went.
				tick(t, p)
				time.Sleep(time.Second)
				live, terminating := backups(t, ns)
				if len(live) != 41 || len(terminating) != 0 {
					t.Errorf("%d live and %d deleted Backups, want all 41 kept: %v", len(live), len(terminating), terminating)
				}
				if err := conditionIs(getPlan(t, p), v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonScheduled); err != nil {
					t.Errorf("retention held back must not stop scheduling: %v", err)
				}

				// The driver gains Reclaim: the Plan is reconciled again
				// (BackupDriver watch) and the 31 go.
				d := &v1alpha1.BackupDriver{}
				if err := c.Get(backuptest.Context(t), client.ObjectKey{Name: driver}, d); err != nil {
					t.Fatal(err)
				}
				d.Spec.Capabilities = []v1alpha1.Capability{v1alpha1.CapabilityReclaim}
				if err := c.Update(backuptest.Context(t), d); err != nil {
					t.Fatal(err)
				}
				waitPlan(t, p, "retention applied once the driver reclaims", func(p *v1alpha1.Plan) error {
					return conditionIs(p, v1alpha1.ConditionRetention, metav1.ConditionTrue, v1alpha1.ReasonRetentionApplied)
				})
			}
			backuptest.EventuallyEvery(t, poll, 60*time.Second, "only the kept Backups remain", func() error {
				live, terminating := backups(t, ns)
				if diff := cmp.Diff(wantKeep, live); diff != "" || len(terminating) > 0 {
					return fmt.Errorf("live (-want +got):\n%s\nterminating %v", diff, terminating)
				}
				return nil
			})
		})
	}
}

func createDriver(t *testing.T, ns string, reclaim bool) string {
	t.Helper()
	d := &v1alpha1.BackupDriver{
		ObjectMeta: metav1.ObjectMeta{Name: "test-" + ns},
		Spec: v1alpha1.BackupDriverSpec{
			StrategyKinds: []string{"Job"}, ProtocolVersions: []string{v1alpha1.ProtocolVersion},
			Lease: v1alpha1.LeaseRef{Namespace: ns, Name: "test-driver"},
		},
	}
	if reclaim {
		d.Spec.Capabilities = []v1alpha1.Capability{v1alpha1.CapabilityReclaim}
	}
	if err := c.Create(backuptest.Context(t), d); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(backuptest.Context(t), d) })
	return d.Name
}

// createBackup creates a ready Backup of a job of plan taken at, as
// driver would: labelled with the Plan's name and its UID (which the
// driver copies from the job's status.planUID, written by the core).
func createBackup(t *testing.T, ns string, plan *v1alpha1.Plan, name, driver string, at time.Time, finalizer bool) {
	t.Helper()
	createBackupLabelled(t, ns, name, driver, at, finalizer, map[string]string{
		v1alpha1.LabelPlan: plan.Name, v1alpha1.LabelPlanUID: string(plan.UID), v1alpha1.LabelDriver: driver})
}

// createBackupLabelled creates a ready Backup labelled labels taken at, as
// driver would.
func createBackupLabelled(t *testing.T, ns, name, driver string, at time.Time, finalizer bool, labels map[string]string) {
	t.Helper()
	b := &v1alpha1.Backup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: v1alpha1.BackupSpec{
			ApplicationRef: planSpec("").ApplicationRef,
			DriverRef:      v1alpha1.DriverRef{Name: driver, ProtocolVersion: v1alpha1.ProtocolVersion},
			Strategy:       v1alpha1.Strategy{Kind: "Job"},
			BackupJobName:  name, PlanName: labels[v1alpha1.LabelPlan], TakenAt: metav1.Time{Time: at},
		},
	}
	if finalizer {
		b.Finalizers = []string{v1alpha1.BackupFinalizer}
	}
	if err := c.Create(backuptest.Context(t), b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { releaseBackup(t, ns, name) })
	setReady(t, ns, name, driver, true)
}

// brokenBackup is a Backup whose Ready is False.
const brokenBackup = "db-broken"

// setReady writes a Backup's Ready condition as its driver.
func setReady(t *testing.T, ns, name, driver string, ready bool) {
	t.Helper()
	cond := metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonSucceeded,
		Message: "restorable", LastTransitionTime: metav1.Now(),
	}
	if !ready {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, v1alpha1.ReasonBackendFailed, "the upload failed"
	}
	b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	status := map[string]any{"conditions": []metav1.Condition{cond}}
	if err := apply.Status(backuptest.Context(t), c, b, status, v1alpha1.DriverFieldManager(driver)); err != nil {
		t.Fatal(err)
	}
}

// releaseBackup removes the driver's finalizer, as the driver does once
// the data is reclaimed.
func releaseBackup(t testing.TB, ns, name string) {
	b := &v1alpha1.Backup{}
	if err := c.Get(backuptest.Context(t), client.ObjectKey{Namespace: ns, Name: name}, b); apierrors.IsNotFound(err) {
		return
	} else if err != nil {
		t.Error(err)
		return
	}
	if len(b.Finalizers) == 0 {
		return
	}
	patch := client.MergeFrom(b.DeepCopy())
	b.Finalizers = nil
	if err := c.Patch(backuptest.Context(t), b, patch); client.IgnoreNotFound(err) != nil {
		t.Error(err)
	}
}

// backups returns the names of the Backups in ns, those not being
// deleted and those being deleted, sorted.
func backups(t testing.TB, ns string) (live, terminating []string) {
	t.Helper()
	var list v1alpha1.BackupList
	if err := c.List(backuptest.Context(t), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, b := range list.Items {
		if b.DeletionTimestamp != nil {
			terminating = append(terminating, b.Name)
		} else {
			live = append(live, b.Name)
		}
	}
	slices.Sort(live)
	slices.Sort(terminating)
	return live, terminating
}
