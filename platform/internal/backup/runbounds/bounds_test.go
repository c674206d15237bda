package runbounds

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// evaluate applies the bounds of contract k7 ("Runs") to a job's status
// at a time: which failure or stall, and when to look again.
func TestEvaluate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mins := func(n int) time.Duration { return time.Duration(n) * time.Minute }
	mt := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	micro := func(d time.Duration) metav1.MicroTime { return metav1.NewMicroTime(t0.Add(d)) }
	bound := func(to backupsv1alpha1.Timeouts) *backupsv1alpha1.Binding {
		return &backupsv1alpha1.Binding{DriverRef: backupsv1alpha1.DriverRef{Name: "x"}, Timeouts: to, BoundTime: mt(0)}
	}
	claim := func(acquire, renew time.Duration, lease int32) *backupsv1alpha1.Claim {
		return &backupsv1alpha1.Claim{HolderIdentity: "x-0", AcquireTime: micro(acquire), RenewTime: micro(renew), LeaseDurationSeconds: lease}
	}
	defaults := backupsv1alpha1.Timeouts{}
	for _, tc := range []struct {
		name string
		// why is the rule the case pins.
		why string
		st  backupsv1alpha1.JobStatus
		// at is the evaluation time, from t0.
		at time.Duration
		// fail and stal are the reasons expected to fail and to stall
		// the job ("": none).
		fail, stal string
		// next is the next evaluation, from t0; -1: none.
		next time.Duration
	}{
		{
			name: "unclaimed, in time (default 10m)",
			why:  "a bound job no driver claimed yet waits up to the default pending timeout",
			st:   backupsv1alpha1.JobStatus{Binding: bound(defaults)},
			at:   mins(9),
			next: mins(10),
		},
		{
			name: "unclaimed, late",
			why:  "a bound job unclaimed past the pending timeout fails, and is never looked at again",
			st:   backupsv1alpha1.JobStatus{Binding: bound(defaults)},
			at:   mins(10),
			fail: backupsv1alpha1.ReasonPendingTimeout,
			next: -1,
		},
		{
			name: "claimed, healthy: next is the lease's end",
			why:  "a renewed claim is next checked when its lease would expire",
			st:   backupsv1alpha1.JobStatus{Binding: bound(defaults), Claim: claim(mins(1), mins(2), 30)},
			at:   mins(2),
			next: mins(2) + 30*time.Second,
		},
		{
			name: "lease lost wins over no progress",
			why:  "a claim not renewed for three lease periods stalls the job as DriverLost, before any progress bound",
			st:   backupsv1alpha1.JobStatus{Binding: bound(defaults), Claim: claim(0, 0, 30)},
			at:   mins(20),
			stal: backupsv1alpha1.ReasonDriverLost,
			next: 6 * time.Hour,
		},
		{
			name: "no progress since the last report",
			why:  "a live claim whose last progress is older than timeouts.stall stalls the job as NoProgress",
			st: backupsv1alpha1.JobStatus{
				Binding:  bound(backupsv1alpha1.Timeouts{Stall: &metav1.Duration{Duration: mins(5)}}),
				Claim:    claim(0, mins(9), 3600),
				Progress: &backupsv1alpha1.Progress{Time: mt(mins(4))},
			},
			at:   mins(9),
			stal: backupsv1alpha1.ReasonNoProgress,
			next: mins(9) + time.Hour,
		},
		{
			name: "progress within the stall bound",
			why:  "progress reported within timeouts.stall moves the next check to its end",
			st: backupsv1alpha1.JobStatus{
				Binding:  bound(backupsv1alpha1.Timeouts{Stall: &metav1.Duration{Duration: mins(5)}}),
				Claim:    claim(0, mins(9), 3600),
				Progress: &backupsv1alpha1.Progress{Time: mt(mins(6))},
			},
			at:   mins(9),
			next: mins(11),
		},
		{
			name: "a takeover restarts the stall count",
			why:  "a new claim's acquireTime counts as progress: the new holder gets a whole stall period",
			st: backupsv1alpha1.JobStatus{
				Binding:  bound(backupsv1alpha1.Timeouts{Stall: &metav1.Duration{Duration: mins(5)}}),
				Claim:    claim(mins(8), mins(9), 3600),
				Progress: &backupsv1alpha1.Progress{Time: mt(mins(1))},
			},
			at:   mins(9),
			next: mins(13),
		},
		{
			name: "run deadline from startTime",
			why:  "timeouts.run counts from status.startTime, not the claim, and fails the job whatever its progress",
			st: backupsv1alpha1.JobStatus{
				Binding:   bound(backupsv1alpha1.Timeouts{Run: &metav1.Duration{Duration: mins(30)}}),
				Claim:     claim(mins(20), mins(40), 3600),
				StartTime: &metav1.Time{Time: t0.Add(mins(5))},
				Progress:  &backupsv1alpha1.Progress{Time: mt(mins(40))},
			},
			at:   mins(35),
			fail: backupsv1alpha1.ReasonDeadlineExceeded,
			next: -1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := evaluate(&tc.st, t0.Add(tc.at))
			if got := reason(v.fail); got != tc.fail {
				t.Errorf("fail %q, want %q: %s", got, tc.fail, tc.why)
			}
			if got := reason(v.stall); got != tc.stal {
				t.Errorf("stall %q, want %q: %s", got, tc.stal, tc.why)
			}
			switch {
			case tc.next < 0 && v.fail == nil:
				t.Errorf("no failure, want one and no next: %s", tc.why)
			case tc.next >= 0 && !v.next.Equal(t0.Add(tc.next)):
				t.Errorf("next %s, want %s: %s", v.next.Sub(t0), tc.next, tc.why)
			}
		})
	}
}

func reason(f *finding) string {
	if f == nil {
		return ""
	}
	return f.reason
}
