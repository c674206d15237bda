package plan_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/plan"
	"cozystack.io/sdk/backup/api/v1alpha1"
)

// A Plan due every minute whose jobs take 3 minutes, driven minute by
// minute for 10 minutes on a fake clock. The test plays the driver:
// before each minute it ends the jobs that have run 3 minutes
// (Succeeded) and those asked to cancel (Cancelled), and waits until the
// Plan's status shows it, then moves the clock to 5 s past the minute
// and waits until that run was started or skipped.
func TestConcurrencyPolicies(t *testing.T) {
	need(t)
	for _, tc := range []struct {
		policy v1alpha1.ConcurrencyPolicy
		// started and skipped are the minutes (1-based) whose run starts
		// or is skipped.
		started, skipped []int
		// maxActive is the most active jobs seen after a minute.
		maxActive int
		// cancels: each new run cancels the previous job.
		cancels bool
	}{
		// J1 runs minutes 1-4; 2 and 3 are forbidden; J4 runs 4-7...
		{policy: v1alpha1.ForbidConcurrent, started: []int{1, 4, 7, 10}, skipped: []int{2, 3, 5, 6, 8, 9}, maxActive: 1},
		// Every minute starts; three overlap (the one started now and
		// the two before, the one from three minutes ago having ended).
		{policy: v1alpha1.AllowConcurrent, started: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, maxActive: 3},
		// Every minute starts and cancels the previous: right after a
		// minute the cancelled job (until its driver ends it) and the new
		// one are active.
		{policy: v1alpha1.ReplaceConcurrent, started: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, maxActive: 2, cancels: true},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			ns := backuptest.TempNamespace(t, c, "plan-")
			spec := planSpec("* * * * *")
			spec.ConcurrencyPolicy = tc.policy
			p := createPlan(t, ns, "db", spec)
			first := firstMinute(p)
			clk := clocktesting.NewFakeClock(first.Add(-30 * time.Second))
			startReconciler(t, ns, clk)

			minute := func(i int) time.Time { return first.Add(time.Duration(i-1) * time.Minute) }
			startedAt := map[string]time.Time{}
			var started, skipped []int
			maxActive := 0
			for i := 1; i <= 10; i++ {
				// The driver's part, before the minute: jobs started 3
				// minutes before it succeed at it; cancelled ones end.
				var ended []string
				for name, j := range jobs(t, p) {
					switch {
					case j.Status.Phase.Terminal():
					case j.Spec.Cancel:
						finish(t, j, v1alpha1.PhaseCancelled, minute(i).Add(-time.Second))
						ended = append(ended, name)
					case !startedAt[name].Add(3 * time.Minute).After(minute(i)):
						finish(t, j, v1alpha1.PhaseSucceeded, startedAt[name].Add(3*time.Minute))
						ended = append(ended, name)
					}
				}
				waitPlan(t, p, "the ended jobs leave status.active", func(p *v1alpha1.Plan) error {
					for _, name := range ended {
						if slices.Contains(p.Status.Active, name) {
							return fmt.Errorf("%s still active", name)
						}
					}
					return nil
				})

				clk.SetTime(minute(i).Add(5 * time.Second))
				tick(t, p)
				got := waitPlan(t, p, fmt.Sprintf("minute %d handled", i), handled(minute(i)))
				all := jobs(t, p)
				active := activeJobs(all)
				maxActive = max(maxActive, len(active))
				if diff := cmp.Diff(active, got.Status.Active); diff != "" {
					t.Errorf("minute %d: status.active differs from the active jobs (-jobs +status):\n%s", i, diff)
				}
				if tc.policy == v1alpha1.ForbidConcurrent && len(active) > 1 {
					t.Errorf("minute %d: %d active jobs under Forbid: %v", i, len(active), active)
				}
				name := plan.JobName(p.Name, minute(i))
				if got.Status.LastScheduleTime != nil && got.Status.LastScheduleTime.Equal(&metav1.Time{Time: minute(i)}) {
					started = append(started, i)
					startedAt[name] = minute(i)
					j, ok := all[name]
					if !ok {
						t.Fatalf("minute %d: started, but no job %s", i, name)
					}
					checkJob(t, got, j)
					if tc.cancels && i > 1 {
						prev := all[plan.JobName(p.Name, minute(i-1))]
						if prev == nil || !prev.Spec.Cancel {
							t.Errorf("minute %d: Replace did not cancel the previous job: %+v", i, prev)
						}
					}
				} else {
					skipped = append(skipped, i)
					if _, ok := all[name]; ok {
						t.Errorf("minute %d: skipped, but job %s exists", i, name)
					}
					s := got.Status.LastSkipped
					if s.Reason != v1alpha1.ReasonConcurrencyForbidden || !strings.Contains(s.Message, "Forbid") {
						t.Errorf("minute %d: skip record %+v, want ConcurrencyForbidden", i, s)
					}
				}
				if err := conditionIs(got, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonScheduled, minute(i+1).UTC().Format(time.RFC3339)); err != nil {
					t.Errorf("minute %d: %v", i, err)
				}
				if got.Status.NextScheduleTime == nil || !got.Status.NextScheduleTime.Equal(&metav1.Time{Time: minute(i + 1)}) {
					t.Errorf("minute %d: nextScheduleTime %v, want %s", i, got.Status.NextScheduleTime, minute(i+1))
				}
			}
			if diff := cmp.Diff(tc.started, started); diff != "" {
				t.Errorf("minutes started (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skipped, skipped); diff != "" {
				t.Errorf("minutes skipped (-want +got):\n%s", diff)
			}
			if maxActive != tc.maxActive {
				t.Errorf("at most %d jobs were active at once, want %d", maxActive, tc.maxActive)
			}
			if n := len(jobs(t, p)); n != len(tc.started) {
				t.Errorf("%d jobs, want %d", n, len(tc.started))
			}
			// lastSuccessfulTime is the latest completion of a Succeeded
			// job.
			final := getPlan(t, p)
			if tc.policy != v1alpha1.ReplaceConcurrent {
				if final.Status.LastSuccessfulTime == nil {
					t.Errorf("no lastSuccessfulTime after jobs succeeded")
				}
			} else if final.Status.LastSuccessfulTime != nil {
				t.Errorf("lastSuccessfulTime %v, but every job was cancelled", final.Status.LastSuccessfulTime)
			}
		})
	}
}

// checkJob checks a job the Plan started: label, controller reference,
// spec.
func checkJob(t *testing.T, p *v1alpha1.Plan, j *v1alpha1.BackupJob) {
	t.Helper()
	if j.Labels[v1alpha1.LabelPlan] != p.Name {
		t.Errorf("job %s: labels %v, want %s=%s", j.Name, j.Labels, v1alpha1.LabelPlan, p.Name)
	}
	if !metav1.IsControlledBy(j, p) {
		t.Errorf("job %s: owners %+v, want the Plan as controller", j.Name, j.OwnerReferences)
	}
	if j.Spec.ApplicationRef != p.Spec.ApplicationRef || j.Spec.BackupClassName != p.Spec.BackupClassName {
		t.Errorf("job %s: spec %+v, want the Plan's application and class", j.Name, j.Spec)
	}
	if len(j.Name) > plan.MaxJobNameLength {
		t.Errorf("job name %s longer than %d", j.Name, plan.MaxJobNameLength)
	}
}

// Suspend: a job started before goes on; while suspended each due run is
// skipped (reason Suspended) and no job starts; after resuming the next
// due run starts.
func TestSuspend(t *testing.T) {
	need(t)
	ns := backuptest.TempNamespace(t, c, "plan-")
	spec := planSpec("* * * * *")
	spec.ConcurrencyPolicy = v1alpha1.AllowConcurrent
	p := createPlan(t, ns, "db", spec)
	first := firstMinute(p)
	minute := func(i int) time.Time { return first.Add(time.Duration(i-1) * time.Minute) }
	clk := clocktesting.NewFakeClock(minute(1).Add(5 * time.Second))
	startReconciler(t, ns, clk)
	tick(t, p)
	waitPlan(t, p, "minute 1 started", handled(minute(1)))
	j1 := plan.JobName(p.Name, minute(1))

	updatePlan(t, p, func(s *v1alpha1.PlanSpec) { s.Suspend = true })
	waitPlan(t, p, "Ready=True Suspended", func(p *v1alpha1.Plan) error {
		return conditionIs(p, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSuspended, "spec.suspend is true")
	})
	for i := 2; i <= 3; i++ {
		clk.SetTime(minute(i).Add(5 * time.Second))
		tick(t, p)
		got := waitPlan(t, p, fmt.Sprintf("minute %d skipped", i), handled(minute(i)))
		if s := got.Status.LastSkipped; s == nil || s.Reason != v1alpha1.ReasonSuspended || !s.Time.Equal(&metav1.Time{Time: minute(i)}) {
			t.Errorf("minute %d: lastSkipped %+v, want Suspended at %s", i, s, minute(i))
		}
		all := jobs(t, p)
		if len(all) != 1 || all[j1] == nil || all[j1].Spec.Cancel {
			t.Errorf("minute %d: jobs %v, want only %s, not cancelled", i, keys(all), j1)
		}
		if !slices.Equal(got.Status.Active, []string{j1}) {
			t.Errorf("minute %d: active %v, want [%s]: active jobs go on", i, got.Status.Active, j1)
		}
	}

	updatePlan(t, p, func(s *v1alpha1.PlanSpec) { s.Suspend = false })
	waitPlan(t, p, "Ready=True Scheduled", func(p *v1alpha1.Plan) error {
		return conditionIs(p, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonScheduled)
	})
	if n := len(jobs(t, p)); n != 1 {
		t.Errorf("resuming started %d jobs for the suspended minutes", n-1)
	}
	clk.SetTime(minute(4).Add(5 * time.Second))
	tick(t, p)
	got := waitPlan(t, p, "minute 4 started", handled(minute(4)))
	if got.Status.LastScheduleTime == nil || !got.Status.LastScheduleTime.Equal(&metav1.Time{Time: minute(4)}) {
		t.Errorf("minute 4 not started: %s", statusString(got))
	}
	if all := jobs(t, p); len(all) != 2 || all[plan.JobName(p.Name, minute(4))] == nil {
		t.Errorf("jobs %v, want %s and the job of minute 4", keys(all), j1)
	}
}

// Missed runs: the core is "down" (the clock jumps) for 2 hours over a
// Plan due every 10 minutes with a 5 minute starting deadline.
func TestMissedSchedule(t *testing.T) {
	need(t)
	sched, err := cron.ParseStandard("*/10 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// back is how long after the 12th missed time (D1 + 2h) the core
		// comes back.
		back time.Duration
		// startsLast: the 12th time is within the deadline and starts.
		startsLast bool
		missed     int
	}{
		// Back 7 minutes after the last due time: all 12 missed, one
		// record, no job.
		{name: "all-late", back: 7 * time.Minute, missed: 12},
		// Back 2 minutes after it: it starts; the 11 before get one
		// record.
		{name: "last-in-time", back: 2 * time.Minute, startsLast: true, missed: 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := backuptest.TempNamespace(t, c, "plan-")
			spec := planSpec("*/10 * * * *")
			spec.StartingDeadlineSeconds = ptr.To[int64](300)
			p := createPlan(t, ns, "db", spec)
			d1 := sched.Next(p.CreationTimestamp.Time)
			clk := clocktesting.NewFakeClock(d1.Add(5 * time.Second))
			startReconciler(t, ns, clk)
			tick(t, p)
			waitPlan(t, p, "the first run started", handled(d1))
			j1 := jobs(t, p)[plan.JobName(p.Name, d1)]
			finish(t, j1, v1alpha1.PhaseSucceeded, d1.Add(time.Minute))
			waitPlan(t, p, "the first job ended", func(p *v1alpha1.Plan) error {
				if len(p.Status.Active) > 0 {
					return fmt.Errorf("active %v", p.Status.Active)
				}
				return nil
			})

			lastDue := d1.Add(2 * time.Hour)
			clk.SetTime(lastDue.Add(tc.back))
			tick(t, p)
			var got *v1alpha1.Plan
			if tc.startsLast {
				got = waitPlan(t, p, "the most recent run started", handled(lastDue))
			} else {
				got = waitPlan(t, p, "the missed runs recorded", handled(lastDue))
			}
			s := got.Status.LastSkipped
			if s == nil || s.Reason != v1alpha1.ReasonMissedSchedule || !strings.Contains(s.Message, fmt.Sprintf("%d runs", tc.missed)) {
				t.Fatalf("lastSkipped %+v, want MissedSchedule naming %d runs", s, tc.missed)
			}
			wantJobs := []string{j1.Name}
			if tc.startsLast {
				wantJobs = append(wantJobs, plan.JobName(p.Name, lastDue))
				if want := lastDue.Add(-10 * time.Minute); !s.Time.Equal(&metav1.Time{Time: want}) {
					t.Errorf("the record is for %s, want the last missed time %s", s.Time, want)
				}
			} else if !strings.Contains(s.Message, lastDue.UTC().Format(time.RFC3339)) {
				t.Errorf("the record %q does not name the last missed time %s", s.Message, lastDue)
			}
			record := *s
			checkJobs := func(when string) {
				t.Helper()
				got := keys(jobs(t, p))
				slices.Sort(wantJobs)
				if diff := cmp.Diff(wantJobs, got); diff != "" {
					t.Errorf("%s: jobs (-want +got):\n%s", when, diff)
				}
			}
			checkJobs("after the jump")

			// Another pass at the same time changes nothing: one record,
			// no burst.
			tick(t, p)
			time.Sleep(time.Second)
			again := waitPlan(t, p, "a second pass", func(p *v1alpha1.Plan) error {
				if p.Status.ObservedGeneration != p.Generation {
					return fmt.Errorf("not observed")
				}
				return nil
			})
			if diff := cmp.Diff(record, *again.Status.LastSkipped); diff != "" {
				t.Errorf("a second pass changed the record (-first +second):\n%s", diff)
			}
			checkJobs("after a second pass")

			// The next due time runs normally (the driver ends the job of
			// the last due time first, so Forbid does not skip it).
			if tc.startsLast {
				finish(t, jobs(t, p)[plan.JobName(p.Name, lastDue)], v1alpha1.PhaseSucceeded, lastDue.Add(5*time.Minute))
				waitPlan(t, p, "the job of the last due time ended", func(p *v1alpha1.Plan) error {
					if len(p.Status.Active) > 0 {
						return fmt.Errorf("active %v", p.Status.Active)
					}
					return nil
				})
			}
			next := lastDue.Add(10 * time.Minute)
			clk.SetTime(next.Add(5 * time.Second))
			tick(t, p)
			got = waitPlan(t, p, "the next run", handled(next))
			if got.Status.LastScheduleTime == nil || !got.Status.LastScheduleTime.Equal(&metav1.Time{Time: next}) {
				t.Errorf("the next run was not started: %s", statusString(got))
			}
			wantJobs = append(wantJobs, plan.JobName(p.Name, next))
			checkJobs("after the next due time")
		})
	}
}

// Restart safety: two instances at one scheduled time, and an instance
// that created the job and died before writing the status, make one job
// per scheduled time.
func TestOneJobPerScheduledTime(t *testing.T) {
	need(t)
	for _, tc := range []struct {
		name string
		// instances running at once.
		instances int
		// precreated: the job of the first minute exists, made by a core
		// that stopped before recording it.
		precreated bool
	}{
		{name: "two-instances", instances: 2},
		{name: "restart-after-create", instances: 1, precreated: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := backuptest.TempNamespace(t, c, "plan-")
			spec := planSpec("* * * * *")
			p := createPlan(t, ns, "db", spec)
			first := firstMinute(p)
			if tc.precreated {
				j := &v1alpha1.BackupJob{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: plan.JobName(p.Name, first), Labels: map[string]string{v1alpha1.LabelPlan: p.Name},
						OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(p, v1alpha1.GroupVersion.WithKind("Plan"))}},
					Spec: v1alpha1.BackupJobSpec{ApplicationRef: p.Spec.ApplicationRef, BackupClassName: p.Spec.BackupClassName},
				}
				if err := c.Create(backuptest.Context(t), j); err != nil {
					t.Fatal(err)
				}
			}
			clk := clocktesting.NewFakeClock(first.Add(5 * time.Second))
			for range tc.instances {
				startReconciler(t, ns, clk)
			}
			tick(t, p)
			got := waitPlan(t, p, "the first run started", func(p *v1alpha1.Plan) error {
				if p.Status.LastScheduleTime == nil || !p.Status.LastScheduleTime.Equal(&metav1.Time{Time: first}) {
					return fmt.Errorf("not started")
				}
				return nil
			})
			want := []string{plan.JobName(p.Name, first)}
			if !slices.Equal(got.Status.Active, want) {
				t.Errorf("active %v, want %v", got.Status.Active, want)
			}
			// Give the instances time to act again.
			tick(t, p)
			time.Sleep(2 * time.Second)
			if diff := cmp.Diff(want, keys(jobs(t, p))); diff != "" {
				t.Errorf("jobs (-want +got):\n%s", diff)
			}
			if s := getPlan(t, p).Status.LastSkipped; s != nil {
				t.Errorf("lastSkipped %+v: the existing job was taken for a concurrent one", s)
			}
		})
	}
}

// An invalid cron expression or time zone stalls the Plan, naming the
// field; nothing is scheduled until it is fixed.
func TestInvalidSchedule(t *testing.T) {
	need(t)
	for _, tc := range []struct {
		name, cron, zone, field string
	}{
		{name: "cron", cron: "61 * * * *", field: "spec.schedule.cron"},
		{name: "zone", cron: "* * * * *", zone: "Mars/Olympus", field: "spec.schedule.timeZone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := backuptest.TempNamespace(t, c, "plan-")
			spec := planSpec(tc.cron)
			spec.Schedule.TimeZone = tc.zone
			p := createPlan(t, ns, "db", spec)
			first := firstMinute(p)
			clk := clocktesting.NewFakeClock(first.Add(5 * time.Second))
			startReconciler(t, ns, clk)
			got := waitPlan(t, p, "Stalled", func(p *v1alpha1.Plan) error {
				if err := conditionIs(p, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidSchedule, tc.field); err != nil {
					return err
				}
				return conditionIs(p, v1alpha1.ConditionStalled, metav1.ConditionTrue, v1alpha1.ReasonInvalidSchedule, tc.field)
			})
			if got.Status.NextScheduleTime != nil || len(jobs(t, p)) != 0 {
				t.Errorf("an invalid Plan scheduled: %s", statusString(got))
			}
			updatePlan(t, p, func(s *v1alpha1.PlanSpec) {
				s.Schedule = v1alpha1.Schedule{Cron: "* * * * *", TimeZone: "Europe/Berlin"}
			})
			got = waitPlan(t, p, "fixed", func(p *v1alpha1.Plan) error {
				if err := conditionIs(p, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonScheduled); err != nil {
					return err
				}
				if p.Status.LastScheduleTime == nil {
					return fmt.Errorf("the due run did not start")
				}
				return nil
			})
			for _, c := range got.Status.Conditions {
				if c.Type == v1alpha1.ConditionStalled {
					t.Errorf("Stalled is still there: %+v", c)
				}
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
