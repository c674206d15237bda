package backup_test

import (
	"fmt"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"cozystack.io/platform/internal/backup/backuptest"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// claimDuration is the Job driver's claim lease in this test.
const claimDuration = 3 * time.Second

// A driver killed mid-run (SIGKILL: no clean shutdown, no released claim)
// is noticed by the core: Stalled=True, reason DriverLost, within three
// claim lease periods. A restarted replica of the same driver takes the
// claim over and resumes without a second backend object, and the job
// ends Succeeded with one Backup. The core and the driver are the real
// cozystack-controller binary in two processes (--controllers), as two
// Deployments would run them; the test writes the batch Job's completion
// as the Job controller would, since nothing runs pods here.
func TestDriverKilledMidRun(t *testing.T) {
	need(t)
	start(t, "core", "--controllers=backup-core", "--install-crds")
	driverArgs := func(identity string) []string {
		return []string{"--controllers=backup-job-driver", "--backup-driver-identity=" + identity,
			"--backup-claim-duration=" + claimDuration.String(), "--backup-driver-lease-duration=10s"}
	}
	first := start(t, "driver-a", driverArgs("driver-a")...)

	ns := "backup-driverlost"
	jobClass(t, "driverlost")
	backuptest.Namespace(t, c, ns)
	application(t, ns, "db", `{"size":"10Gi","version":"v17"}`)
	job := &backupsv1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-hand"}, Spec: backupsv1alpha1.BackupJobSpec{
		ApplicationRef: backupsv1alpha1.ApplicationRef{
			ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: appKind}, Name: "db"},
		BackupClassName: "driverlost",
	}}
	if err := c.Create(backuptest.Context(t), job); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: job.Name}

	// Bound to the Job driver, claimed by driver-a, one batch Job.
	backuptest.Eventually(t, 90*time.Second, "claimed by driver-a with one batch Job", func() error {
		j := getJob(t, key)
		switch {
		case j.Status.Binding == nil:
			return fmt.Errorf("not bound: %v", j.Status.Conditions)
		case j.Status.Claim == nil || j.Status.Claim.HolderIdentity != "driver-a" || j.Status.Phase != backupsv1alpha1.PhaseRunning:
			return fmt.Errorf("phase %q, claim %+v", j.Status.Phase, j.Status.Claim)
		case len(batchJobs(t, ns, j.UID)) != 1:
			return fmt.Errorf("%d batch Jobs", len(batchJobs(t, ns, j.UID)))
		}
		return nil
	})
	j := getJob(t, key)
	if j.Status.Binding.DriverRef.Name != "job" || j.Status.Claim.LeaseDurationSeconds != int32(claimDuration/time.Second) {
		t.Fatalf("binding %+v, claim %+v", j.Status.Binding.DriverRef, j.Status.Claim)
	}

	first.kill()
	killed := time.Now()
	var lostAfter time.Duration
	backuptest.Eventually(t, 5*claimDuration+30*time.Second, "Stalled=True DriverLost", func() error {
		j := getJob(t, key)
		if c := apimeta.FindStatusCondition(j.Status.Conditions, backupsv1alpha1.ConditionStalled); c == nil || c.Status != metav1.ConditionTrue || c.Reason != backupsv1alpha1.ReasonDriverLost {
			return fmt.Errorf("Stalled %+v", c)
		}
		lostAfter = time.Since(killed)
		return nil
	})
	t.Logf("DriverLost %s after the kill (claim lease %s)", lostAfter.Round(10*time.Millisecond), claimDuration)
	if lostAfter > 3*claimDuration {
		t.Errorf("DriverLost after %s, want within three claim lease periods (%s)", lostAfter, 3*claimDuration)
	}

	// A restarted replica resumes: the claim moves, takeovers counts it,
	// Stalled is cleared, and it adopts the batch Job instead of making a
	// second one.
	start(t, "driver-b", driverArgs("driver-b")...)
	backuptest.Eventually(t, 90*time.Second, "taken over by driver-b", func() error {
		j := getJob(t, key)
		stalled := apimeta.FindStatusCondition(j.Status.Conditions, backupsv1alpha1.ConditionStalled)
		switch {
		case j.Status.Claim == nil || j.Status.Claim.HolderIdentity != "driver-b" || j.Status.Claim.Takeovers != 1:
			return fmt.Errorf("claim %+v", j.Status.Claim)
		case stalled != nil && stalled.Status == metav1.ConditionTrue:
			return fmt.Errorf("still Stalled: %s", stalled.Message)
		}
		return nil
	})
	jobs := batchJobs(t, ns, j.UID)
	if len(jobs) != 1 {
		t.Fatalf("%d batch Jobs after the takeover, want the one driver-a created", len(jobs))
	}
	complete(t, &jobs[0])
	backuptest.Eventually(t, 60*time.Second, "Succeeded with a Backup", func() error {
		j := getJob(t, key)
		if j.Status.Phase != backupsv1alpha1.PhaseSucceeded || j.Status.BackupName == "" {
			return fmt.Errorf("phase %q, backup %q", j.Status.Phase, j.Status.BackupName)
		}
		return nil
	})
	j = getJob(t, key)
	if got := batchJobs(t, ns, j.UID); len(got) != 1 {
		t.Errorf("%d batch Jobs at the end, want 1", len(got))
	}
	// No finalizer on the objects of the run but the driver's own on the
	// job (it removes the run's backend objects if the job is deleted
	// before it produced a Backup) and on its Backup: the core adds none.
	if f := j.GetFinalizers(); len(f) != 1 || f[0] != backupsv1alpha1.JobFinalizer {
		t.Errorf("job finalizers %v, want only the driver's %s", f, backupsv1alpha1.JobFinalizer)
	}
	if f := jobs[0].GetFinalizers(); len(f) > 0 {
		t.Errorf("batch Job %s has finalizers %v", jobs[0].Name, f)
	}
	if m := driverManagers(j); len(m) != 1 || m[0] != backupsv1alpha1.DriverFieldManager("job") {
		t.Errorf("driver field managers %v, want only %s", m, backupsv1alpha1.DriverFieldManager("job"))
	}
	b := &backupsv1alpha1.Backup{}
	if err := c.Get(backuptest.Context(t), types.NamespacedName{Namespace: ns, Name: j.Status.BackupName}, b); err != nil {
		t.Fatal(err)
	}
	if b.Spec.DriverRef.Name != "job" || b.Spec.BackupJobName != job.Name || b.Spec.ApplicationSnapshotRef == nil {
		t.Errorf("Backup spec %+v", b.Spec)
	}
	if b.Spec.RestoreOverlay == nil || string(b.Spec.RestoreOverlay.Raw) != `{"bootstrap":{"enabled":true,"oldName":"db"}}` {
		t.Errorf("Backup restoreOverlay %v, want the class's rendered", b.Spec.RestoreOverlay)
	}
	if f := b.GetFinalizers(); len(f) != 1 || f[0] != backupsv1alpha1.BackupFinalizer {
		t.Errorf("Backup finalizers %v, want only the driver's %s", f, backupsv1alpha1.BackupFinalizer)
	}
}

// A run the core ends (its class's runTimeout passed: DeadlineExceeded)
// is cleaned up by its driver, not the core: the Job driver deletes the
// batch Job it created and releases its claim; the phase stays Failed.
// Before, the batch Job was left running.
func TestDeadlineExceededCleansUp(t *testing.T) {
	need(t)
	start(t, "core", "--controllers=backup-core", "--install-crds")
	start(t, "driver", "--controllers=backup-job-driver", "--backup-driver-identity=driver-d")
	ns := "backup-deadline"
	jobClass(t, "deadline", func(bc *backupsv1alpha1.BackupClass) {
		bc.Spec.RunTimeout = &metav1.Duration{Duration: 4 * time.Second}
	})
	backuptest.Namespace(t, c, ns)
	application(t, ns, "db", `{}`)
	job := &backupsv1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "slow"}, Spec: backupsv1alpha1.BackupJobSpec{
		ApplicationRef: backupsv1alpha1.ApplicationRef{
			ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: appKind}, Name: "db"},
		BackupClassName: "deadline",
	}}
	if err := c.Create(backuptest.Context(t), job); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: job.Name}
	backuptest.Eventually(t, 90*time.Second, "running with one batch Job", func() error {
		j := getJob(t, key)
		if j.Status.Phase != backupsv1alpha1.PhaseRunning || len(batchJobs(t, ns, j.UID)) != 1 {
			return fmt.Errorf("phase %q, %d batch Jobs", j.Status.Phase, len(batchJobs(t, ns, j.UID)))
		}
		return nil
	})
	backuptest.Eventually(t, 60*time.Second, "DeadlineExceeded, cleaned up", func() error {
		j := getJob(t, key)
		ready := apimeta.FindStatusCondition(j.Status.Conditions, backupsv1alpha1.ConditionReady)
		switch {
		case j.Status.Phase != backupsv1alpha1.PhaseFailed || ready == nil || ready.Reason != backupsv1alpha1.ReasonDeadlineExceeded:
			return fmt.Errorf("phase %q, Ready %+v", j.Status.Phase, ready)
		case j.Status.Claim != nil:
			return fmt.Errorf("claim still held: %+v", j.Status.Claim)
		}
		for _, b := range batchJobs(t, ns, j.UID) {
			if b.DeletionTimestamp == nil {
				return fmt.Errorf("batch Job %s still there", b.Name)
			}
		}
		return nil
	})
}
