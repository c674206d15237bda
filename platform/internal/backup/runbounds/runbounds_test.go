package runbounds_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"cozystack.io/platform/internal/backup/backuptest"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

func d(x time.Duration) *metav1.Duration { return &metav1.Duration{Duration: x} }

// The bounds of contract k7 ("Runs"), for BackupJobs and RestoreJobs,
// each row on a fake clock of its own: an unclaimed job fails with
// PendingTimeout; a run without progress is Stalled NoProgress until the
// next report; a run whose claim is not renewed is Stalled DriverLost
// until the claim is renewed or taken over; a run past runTimeout fails
// with DeadlineExceeded. Every core write keeps the binder's binding,
// snapshot and DriverBound, and never touches the driver's claim or
// progress.
func TestBounds(t *testing.T) {
	need(t)
	ns := backuptest.Namespace(t, c, "runbounds")
	for _, tc := range []struct {
		name     string
		kind     string
		timeouts backupsv1alpha1.Timeouts
		// claimed: the driver claims at the start, with this lease.
		claimed      bool
		leaseSeconds int32
		step         time.Duration
		// want is the condition the core sets after step; phase Failed
		// when it is Ready.
		wantType, wantReason string
		wantMessage          []string
		// recover is the driver's report that clears Stalled.
		recover func(t *testing.T, j job, clk *clocktesting.FakeClock, start time.Time)
	}{
		{
			name: "pending timeout", kind: "BackupJob",
			timeouts: backupsv1alpha1.Timeouts{Pending: d(time.Minute)},
			step:     2 * time.Minute, wantType: backupsv1alpha1.ConditionReady, wantReason: backupsv1alpha1.ReasonPendingTimeout,
			wantMessage: []string{"BackupDriver x did not claim the job", "pendingTimeout of 1m0s"},
		},
		{
			name: "restore pending timeout", kind: "RestoreJob",
			timeouts: backupsv1alpha1.Timeouts{Pending: d(time.Minute)},
			step:     2 * time.Minute, wantType: backupsv1alpha1.ConditionReady, wantReason: backupsv1alpha1.ReasonPendingTimeout,
			wantMessage: []string{"pendingTimeout of 1m0s"},
		},
		{
			name: "no progress", kind: "BackupJob",
			timeouts: backupsv1alpha1.Timeouts{Stall: d(time.Minute)},
			claimed:  true, leaseSeconds: 3600,
			step: 2 * time.Minute, wantType: backupsv1alpha1.ConditionStalled, wantReason: backupsv1alpha1.ReasonNoProgress,
			wantMessage: []string{"BackupDriver x (replica x-0) has reported no progress since", "stallTimeout of 1m0s"},
			recover: func(t *testing.T, j job, clk *clocktesting.FakeClock, start time.Time) {
				claim{holder: "x-0", acquire: start, renew: clk.Now(), leaseSeconds: 3600, start: start, progressAt: clk.Now()}.apply(t, j)
			},
		},
		{
			name: "driver lost", kind: "BackupJob",
			claimed: true, leaseSeconds: 30,
			step: time.Minute, wantType: backupsv1alpha1.ConditionStalled, wantReason: backupsv1alpha1.ReasonDriverLost,
			wantMessage: []string{"replica x-0", "holds 30s", "only a replica of BackupDriver x may take the claim over"},
			recover: func(t *testing.T, j job, clk *clocktesting.FakeClock, start time.Time) {
				// The same replica renews its claim.
				claim{holder: "x-0", acquire: start, renew: clk.Now(), leaseSeconds: 30, start: start, progressAt: clk.Now()}.apply(t, j)
			},
		},
		{
			name: "restore driver lost then taken over", kind: "RestoreJob",
			claimed: true, leaseSeconds: 30,
			step: time.Minute, wantType: backupsv1alpha1.ConditionStalled, wantReason: backupsv1alpha1.ReasonDriverLost,
			wantMessage: []string{"replica x-0", "taken over 0 times"},
			recover: func(t *testing.T, j job, clk *clocktesting.FakeClock, start time.Time) {
				// Another replica of x takes the claim over.
				claim{holder: "x-1", acquire: clk.Now(), renew: clk.Now(), leaseSeconds: 30, takeovers: 1, start: start}.apply(t, j)
			},
		},
		{
			name: "deadline exceeded", kind: "BackupJob",
			timeouts: backupsv1alpha1.Timeouts{Run: d(5 * time.Minute), Stall: d(time.Hour)},
			claimed:  true, leaseSeconds: 3600,
			step: 6 * time.Minute, wantType: backupsv1alpha1.ConditionReady, wantReason: backupsv1alpha1.ReasonDeadlineExceeded,
			wantMessage: []string{"lasted longer than the runTimeout of 5m0s"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Now())
			start := clk.Now()
			j := newJob(t, tc.kind, ns, strings.ReplaceAll(tc.name, " ", "-"))
			bind(t, j, start, tc.timeouts)
			bound := status(get(t, j)).Binding.DeepCopy()
			if tc.claimed {
				claim{holder: "x-0", acquire: start, renew: start, leaseSeconds: tc.leaseSeconds, start: start, progressAt: start}.apply(t, j)
			}
			startBounds(t, clk)

			if tc.claimed {
				// Claimed: the core drops its Reconciling WaitingForDriver
				// and nothing else.
				backuptest.Eventually(t, 30*time.Second, "Reconciling WaitingForDriver dropped", func() error {
					if c := find(get(t, j), backupsv1alpha1.ConditionReconciling); c != nil {
						return errorf("Reconciling %s", backuptest.ShowCondition(c))
					}
					return nil
				})
			}
			if c := find(get(t, j), tc.wantType); c != nil && c.Reason == tc.wantReason {
				t.Fatalf("%s %s before the clock moved", tc.wantType, tc.wantReason)
			}

			clk.Step(tc.step)
			failing := tc.wantType == backupsv1alpha1.ConditionReady
			var got job
			backuptest.Eventually(t, 60*time.Second, tc.wantType+" "+tc.wantReason, func() error {
				got = get(t, j)
				c := find(got, tc.wantType)
				wantStatus := metav1.ConditionTrue
				if failing {
					wantStatus = metav1.ConditionFalse
				}
				if c == nil || c.Status != wantStatus || c.Reason != tc.wantReason {
					return errorf("%s %s, phase %s", tc.wantType, backuptest.ShowCondition(c), status(got).Phase)
				}
				return nil
			})
			c := find(got, tc.wantType)
			for _, s := range tc.wantMessage {
				if !strings.Contains(c.Message, s) {
					t.Errorf("%s message %q lacks %q", tc.wantType, c.Message, s)
				}
			}
			st := status(got)
			if failing && (st.Phase != backupsv1alpha1.PhaseFailed || st.CompletionTime == nil) {
				t.Errorf("phase %s, completionTime %v; want Failed with a completion time", st.Phase, st.CompletionTime)
			}
			if !failing && st.Phase != backupsv1alpha1.PhaseRunning {
				t.Errorf("phase %s, want the driver's Running", st.Phase)
			}
			checkKept(t, got, bound, tc.claimed)
			// Evaluations after the decision (every 200ms here) write
			// nothing more.
			time.Sleep(time.Second)
			if rv := get(t, j).GetResourceVersion(); rv != got.GetResourceVersion() {
				t.Errorf("rewritten without a change (resourceVersion %s, then %s)", got.GetResourceVersion(), rv)
			}

			if tc.recover == nil {
				return
			}
			tc.recover(t, j, clk, start)
			backuptest.Eventually(t, 60*time.Second, "Stalled cleared", func() error {
				got = get(t, j)
				if c := find(got, backupsv1alpha1.ConditionStalled); c != nil {
					return errorf("Stalled %s", backuptest.ShowCondition(c))
				}
				return nil
			})
			checkKept(t, got, bound, true)
		})
	}
}

// checkKept: the core's resend kept the binding, the snapshot and
// DriverBound, and the core owns neither the claim nor the progress; the
// driver owns no binding.
func checkKept(t *testing.T, got job, bound *backupsv1alpha1.Binding, claimed bool) {
	t.Helper()
	st := status(got)
	if !reflect.DeepEqual(st.Binding, bound) {
		t.Errorf("binding changed: %+v, want %+v", st.Binding, bound)
	}
	if c := find(got, backupsv1alpha1.ConditionDriverBound); c == nil || c.Reason != backupsv1alpha1.ReasonBound {
		t.Errorf("DriverBound %s, want the binder's Bound kept", backuptest.ShowCondition(c))
	}
	if bj, ok := got.(*backupsv1alpha1.BackupJob); ok && (bj.Status.ApplicationSnapshot == nil || string(bj.Status.ApplicationSnapshot.Raw) != `{"size":"1Gi"}`) {
		t.Errorf("applicationSnapshot %v, want the binder's kept", bj.Status.ApplicationSnapshot)
	}
	core := backupsv1alpha1.CoreFieldManager
	if backuptest.OwnsStatusField(got, core, "f:claim") || backuptest.OwnsStatusField(got, core, "f:progress") {
		t.Errorf("%s owns the driver's claim or progress: %v", core, got.GetManagedFields())
	}
	if backuptest.OwnsStatusField(got, driver, "f:binding") {
		t.Errorf("%s owns the binding", driver)
	}
	if claimed && (st.Claim == nil || !backuptest.OwnsStatusField(got, driver, "f:claim")) {
		t.Errorf("the driver's claim is gone: %+v", st.Claim)
	}
}
