package conformance

import (
	"context"
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// testExclusivity: a driver acts only on jobs bound to it, and one replica
// runs a job at a time (contract k7, "Binding" and "Runs").
func testExclusivity(t *testing.T, e *env) {
	t.Run("jobs-of-others-untouched", func(t *testing.T) {
		ns := e.testNamespace(t)
		other := "other-" + e.s.Driver
		// The label lies in two of them: only the binding makes a job a
		// driver's.
		foreign := []*v1alpha1.BackupJob{
			e.backupJob(t, ns, "bound-to-other", other, e.s.Parameters, true),
			e.backupJob(t, ns, "labelled-ours-bound-to-other", other, e.s.Parameters, true),
			e.backupJob(t, ns, "labelled-ours-unbound", e.s.Driver, e.s.Parameters, false),
		}
		relabel(t, e, foreign[1], e.s.Driver)
		e.replica(t, "exclusivity-0", nil)
		// Our own job is the barrier: once it succeeded, the driver has
		// seen and passed over the others.
		e.succeededBackup(t, ns, "ours")
		for _, j := range foreign {
			got := e.getBackupJob(t, ns, j.Name)
			if got.Status.Claim != nil || (got.Status.Phase != "" && got.Status.Phase != v1alpha1.PhasePending) {
				t.Errorf("job %s not bound to %s was touched: phase %q, claim %+v", j.Name, e.s.Driver, got.Status.Phase, got.Status.Claim)
			}
			if slices.Contains(managers(got), v1alpha1.DriverFieldManager(e.s.Driver)) {
				t.Errorf("job %s not bound to %s has the driver's field manager: %v", j.Name, e.s.Driver, managers(got))
			}
			if objs := e.backend(t, got.UID); len(objs) > 0 {
				t.Errorf("job %s not bound to %s has %d backend objects", j.Name, e.s.Driver, len(objs))
			}
		}
	})

	t.Run("one-replica-claims-and-another-takes-over", func(t *testing.T) {
		ns := e.testNamespace(t)
		stops := map[string]func(){
			"replica-a": e.replica(t, "replica-a", nil),
			"replica-b": e.replica(t, "replica-b", nil),
		}
		job := e.backupJob(t, ns, "contended", e.s.Driver, e.s.Parameters, true)
		var holder string
		var renewals []time.Time
		// Hold the run unfinished over several renewals: the holder never
		// changes while it renews, and the run has one backend object.
		e.poll(t, "three renewals of one holder's claim", func(ctx context.Context) (bool, error) {
			j := e.getBackupJob(t, ns, job.Name)
			c := j.Status.Claim
			if c == nil {
				return false, nil
			}
			if holder == "" {
				holder = c.HolderIdentity
			}
			if c.HolderIdentity != holder || c.Takeovers != 0 {
				t.Fatalf("claim moved from %s to %s (takeovers %d) while %s was running", holder, c.HolderIdentity, c.Takeovers, holder)
			}
			n := len(e.backend(t, j.UID))
			if n > 1 {
				t.Fatalf("run has %d backend objects, want at most 1", n)
			}
			if len(renewals) == 0 || !c.RenewTime.Time.Equal(renewals[len(renewals)-1]) {
				renewals = append(renewals, c.RenewTime.Time)
			}
			return len(renewals) >= 4 && n == 1, nil
		})
		if _, ok := stops[holder]; !ok {
			t.Fatalf("claim held by %q, not by one of the two replicas", holder)
		}
		// The holder is lost; the other replica takes over once the claim
		// is stale, and resumes the run adopting its backend object.
		stops[holder]()
		e.poll(t, "a takeover", func(ctx context.Context) (bool, error) {
			c := e.getBackupJob(t, ns, job.Name).Status.Claim
			return c != nil && c.HolderIdentity != holder && c.Takeovers == 1, nil
		})
		done := e.waitBackupPhase(t, ns, job.Name, v1alpha1.PhaseSucceeded, job.UID)
		if n := len(e.backend(t, done.UID)); n != 1 {
			t.Errorf("after the takeover the run has %d backend objects, want 1 (adopted)", n)
		}
		if done.Status.Claim.Takeovers != 1 {
			t.Errorf("takeovers %d, want 1", done.Status.Claim.Takeovers)
		}
	})
}

// relabel sets the driver label of job to driverName.
func relabel(t *testing.T, e *env, job *v1alpha1.BackupJob, driverName string) {
	t.Helper()
	got := e.getBackupJob(t, job.Namespace, job.Name)
	patch := client.MergeFrom(got.DeepCopy())
	got.Labels[v1alpha1.LabelDriver] = driverName
	if err := e.c.Patch(e.ctx(t), got, patch); err != nil {
		t.Fatalf("relabel %s: %v", job.Name, err)
	}
}
