package runbounds

import (
	"fmt"
	"time"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// finding is a reason and its message.
type finding struct {
	reason, message string
}

// verdict is the bounds' judgement of one bound job at one time.
type verdict struct {
	// fail: the core fails the job (PendingTimeout, DeadlineExceeded).
	fail *finding
	// stall: Stalled=True (DriverLost, NoProgress); nil removes it.
	stall *finding
	// claimed: a driver holds, or held, the run.
	claimed bool
	// next is the earliest future deadline (zero: none).
	next time.Time
}

// evaluate bounds the run of a bound job, with status st, at now.
func evaluate(st *backupsv1alpha1.JobStatus, now time.Time) verdict {
	b := st.Binding
	def := (&backupsv1alpha1.BackupClass{}).Timeouts()
	pending := backupsv1alpha1.Or(b.Timeouts.Pending, def.Pending.Duration)
	run := backupsv1alpha1.Or(b.Timeouts.Run, def.Run.Duration)
	stall := backupsv1alpha1.Or(b.Timeouts.Stall, def.Stall.Duration)
	driver := b.DriverRef.Name
	var v verdict

	c := st.Claim
	if c == nil {
		deadline := b.BoundTime.Add(pending)
		if !now.Before(deadline) {
			v.fail = &finding{backupsv1alpha1.ReasonPendingTimeout, fmt.Sprintf(
				"BackupDriver %s did not claim the job within the pendingTimeout of %s since it was bound at %s: check that the driver runs (its BackupDriver's Lease is renewed) and its logs, then create a new job",
				driver, pending, stamp(b.BoundTime.Time))}
			return v
		}
		v.next = deadline
		return v
	}
	v.claimed = true

	start := c.AcquireTime.Time
	if st.StartTime != nil {
		start = st.StartTime.Time
	}
	runDeadline := start.Add(run)
	leaseEnd := c.RenewTime.Add(time.Duration(c.LeaseDurationSeconds) * time.Second)
	last := c.AcquireTime.Time
	if p := st.Progress; p != nil && p.Time.After(last) {
		last = p.Time.Time
	}
	stallDeadline := last.Add(stall)

	switch {
	case !now.Before(leaseEnd):
		v.stall = &finding{backupsv1alpha1.ReasonDriverLost, fmt.Sprintf(
			"the claim of BackupDriver %s's replica %s was last renewed at %s and holds %ds without renewal: the replica is gone; only a replica of BackupDriver %s may take the claim over and resume (taken over %d times so far)",
			driver, c.HolderIdentity, stamp(c.RenewTime.Time), c.LeaseDurationSeconds, driver, c.Takeovers)}
	case !now.Before(stallDeadline):
		v.stall = &finding{backupsv1alpha1.ReasonNoProgress, fmt.Sprintf(
			"BackupDriver %s (replica %s) has reported no progress since %s, longer than the stallTimeout of %s: check the driver's logs and its backend",
			driver, c.HolderIdentity, stamp(last), stall)}
	}
	if !now.Before(runDeadline) {
		v.fail = &finding{backupsv1alpha1.ReasonDeadlineExceeded, fmt.Sprintf(
			"the run by BackupDriver %s started at %s and lasted longer than the runTimeout of %s: raise runTimeout in the BackupClass if runs this long are expected, then create a new job",
			driver, stamp(start), run)}
		return v
	}
	v.next = runDeadline
	if now.Before(leaseEnd) {
		v.next = earliest(v.next, leaseEnd)
	}
	if now.Before(stallDeadline) {
		v.next = earliest(v.next, stallDeadline)
	}
	return v
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
