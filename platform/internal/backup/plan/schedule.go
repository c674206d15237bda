package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// DefaultStartingDeadline is the starting deadline of a Plan whose
// spec.startingDeadlineSeconds is nil (the CRD's default, 300).
const DefaultStartingDeadline = 300 * time.Second

// maxCounted bounds how many missed runs are counted one by one; past it
// a message says "more than".
const maxCounted = 1000

// schedule is a Plan's parsed spec.schedule.
type schedule struct {
	cron cron.Schedule
	loc  *time.Location
}

// parseSchedule parses s: a standard five-field cron expression or a
// robfig/cron descriptor (@yearly, @monthly, @weekly, @daily, @hourly,
// @every <duration> of at least one minute), in the IANA time zone
// s.TimeZone (empty means UTC). now is used to check that the expression
// ever comes due. The error names the field: spec.schedule.cron or
// spec.schedule.timeZone.
func parseSchedule(s v1alpha1.Schedule, now time.Time) (schedule, *field.Error) {
	zonePath := field.NewPath("spec", "schedule", "timeZone")
	cronPath := field.NewPath("spec", "schedule", "cron")
	loc := time.UTC
	if s.TimeZone != "" {
		if strings.EqualFold(s.TimeZone, "Local") {
			return schedule{}, field.Invalid(zonePath, s.TimeZone, "must be an IANA time zone name such as Europe/Berlin, not the controller's local zone")
		}
		l, err := time.LoadLocation(s.TimeZone)
		if err != nil {
			return schedule{}, field.Invalid(zonePath, s.TimeZone, "not an IANA time zone name (such as Europe/Berlin or UTC): "+err.Error())
		}
		loc = l
	}
	expr := strings.TrimSpace(s.Cron)
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return schedule{}, field.Invalid(cronPath, s.Cron, "set the time zone in spec.schedule.timeZone, not in the expression")
	}
	sched, err := parseCron(expr)
	if err != nil {
		return schedule{}, field.Invalid(cronPath, s.Cron, "not a five-field cron expression (minute hour day-of-month month day-of-week) or descriptor (@daily, @every 1h): "+err.Error())
	}
	switch sc := sched.(type) {
	case *cron.SpecSchedule:
		sc.Location = loc
	case cron.ConstantDelaySchedule:
		// A BackupJob's name holds the minute of its scheduled time:
		// two runs in one minute would be one job.
		if sc.Delay < time.Minute {
			return schedule{}, field.Invalid(cronPath, s.Cron, "@every must be at least 1m")
		}
	}
	if sched.Next(now).IsZero() {
		return schedule{}, field.Invalid(cronPath, s.Cron, "never comes due (e.g. a day that month does not have)")
	}
	return schedule{cron: sched, loc: loc}, nil
}

// parseCron is cron.ParseStandard, which has panicked on some inputs in
// the past: a panic is an error here.
func parseCron(expr string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return cron.ParseStandard(expr)
}

// dueTimes describes the scheduled times in (after, now].
type dueTimes struct {
	// n is how many; more when there are more than maxCounted (n is then
	// maxCounted).
	n    int
	more bool
	// first, prev and last are the first, the one before the last, and
	// the last of them (zero when n is too small).
	first, prev, last time.Time
}

// due returns the scheduled times of sched in (after, now].
func due(sched cron.Schedule, after, now time.Time) dueTimes {
	var d dueTimes
	first := sched.Next(after)
	if first.IsZero() || first.After(now) {
		return d
	}
	d.first = first
	if every, ok := sched.(cron.ConstantDelaySchedule); ok {
		// Anchored at first: arithmetic.
		k := int64(now.Sub(first)/every.Delay) + 1
		d.last = first.Add(time.Duration(k-1) * every.Delay)
		if k > 1 {
			d.prev = d.last.Add(-every.Delay)
		}
		d.n, d.more = int(min(k, maxCounted)), k > maxCounted
		return d
	}
	for t := first; !t.IsZero() && !t.After(now); t = sched.Next(t) {
		if d.n == maxCounted {
			d.more = true
			break
		}
		d.n++
		d.prev, d.last = d.last, t
	}
	if d.more {
		d.last = lastAtOrBefore(sched, after, now)
		d.prev = lastAtOrBefore(sched, after, d.last.Add(-time.Nanosecond))
	}
	return d
}

// lastAtOrBefore returns the last time of a calendar schedule in (after,
// t], zero if none, without walking from after: it looks back from t over
// windows that double in length.
func lastAtOrBefore(sched cron.Schedule, after, t time.Time) time.Time {
	for back := time.Minute; ; back *= 2 {
		from := t.Add(-back)
		if !from.After(after) {
			from = after
		}
		if f := sched.Next(from); !f.IsZero() && !f.After(t) {
			last := f
			for n := sched.Next(f); !n.IsZero() && !n.After(t); n = sched.Next(n) {
				last = n
			}
			return last
		}
		if from.Equal(after) {
			return time.Time{}
		}
	}
}

// decideInput is what the scheduler decides from.
type decideInput struct {
	plan     string
	sched    schedule
	now      time.Time
	deadline time.Duration
	suspend  bool
	policy   v1alpha1.ConcurrencyPolicy
	// earliest is the last scheduled time already acted on (started,
	// skipped or missed), or the Plan's creation.
	earliest time.Time
	// active are the names of the Plan's active jobs, sorted.
	active []string
	// exists reports whether the Plan has a job named so.
	exists func(name string) bool
}

// decision is what the scheduler does now.
type decision struct {
	// scheduled is the scheduled time acted on; zero when nothing came
	// due since earliest.
	scheduled time.Time
	// start: create (or, when it exists, adopt) the job JobName(plan,
	// scheduled).
	start bool
	// cancel are active jobs to cancel first (Replace).
	cancel []string
	// skipped is the new status.lastSkipped; nil keeps the old one.
	skipped *v1alpha1.SkippedRun
	// next is the next scheduled time after this decision.
	next time.Time
}

// decide applies contract k7's scheduling rules, those of batch/v1
// CronJob (pkg/controller/cronjob of Kubernetes) with a record of each
// run not started:
//   - of the times due since earliest, only the most recent may start,
//     and only within deadline of it; the older ones are missed, recorded
//     once (reason MissedSchedule, with their count and the last of them);
//   - a run whose job exists already is adopted whatever the policy (a
//     restart, or a second instance, never makes a second job);
//   - suspend skips the run (reason Suspended);
//   - with an active job, Forbid skips the run (reason
//     ConcurrencyForbidden), Replace cancels the active jobs and starts
//     it, Allow starts it.
func decide(in decideInput) decision {
	d := due(in.sched.cron, in.earliest, in.now)
	out := decision{}
	if d.n == 0 {
		out.next = in.sched.cron.Next(in.earliest)
		return out
	}
	out.scheduled = d.last
	out.next = in.sched.cron.Next(d.last)
	ts := func(t time.Time) string { return t.In(in.sched.loc).Format(time.RFC3339) }
	count := func(n int, more bool) string {
		if more {
			return fmt.Sprintf("more than %d runs", n)
		}
		if n == 1 {
			return "1 run"
		}
		return fmt.Sprintf("%d runs", n)
	}
	// earlier says what happened to the runs before the last, if any.
	earlier := ""
	if d.n > 1 {
		earlier = fmt.Sprintf(" %s due from %s to %s were missed (only the most recent due run may start).",
			count(d.n-1, d.more), ts(d.first), ts(d.prev))
	}
	skip := func(reason, format string, args ...any) {
		out.skipped = &v1alpha1.SkippedRun{Reason: reason, Message: fmt.Sprintf(format, args...) + earlier}
		out.skipped.Time.Time = d.last
	}
	name := JobName(in.plan, d.last)
	switch {
	case in.exists(name):
		// Started already, by a previous life of this controller or by
		// another instance.
		out.start = true
	case in.suspend:
		skip(v1alpha1.ReasonSuspended, "the run due at %s was skipped: spec.suspend is true; set it to false to resume (active jobs go on).", ts(d.last))
	case in.now.Sub(d.last) > in.deadline:
		out.skipped = &v1alpha1.SkippedRun{Reason: v1alpha1.ReasonMissedSchedule, Message: fmt.Sprintf(
			"%s due from %s to %s were missed: none was started within spec.startingDeadlineSeconds (%d) of its time (was the backup core down?); no job was created for them, and the next run is due at %s.",
			count(d.n, d.more), ts(d.first), ts(d.last), int64(in.deadline/time.Second), ts(out.next))}
		out.skipped.Time.Time = d.last
	case len(in.active) > 0 && in.policy == v1alpha1.ForbidConcurrent:
		which := "job " + in.active[0] + " is"
		if len(in.active) > 1 {
			which = "jobs " + strings.Join(in.active, ", ") + " are"
		}
		skip(v1alpha1.ReasonConcurrencyForbidden, "the run due at %s was skipped: %s still active and spec.concurrencyPolicy is Forbid (set Replace to cancel it, or Allow to run beside it).",
			ts(d.last), which)
	default:
		out.start = true
		if in.policy == v1alpha1.ReplaceConcurrent {
			out.cancel = in.active
		}
	}
	if out.start && d.n > 1 {
		out.skipped = &v1alpha1.SkippedRun{Reason: v1alpha1.ReasonMissedSchedule, Message: fmt.Sprintf(
			"%s due from %s to %s were missed; the most recent, due at %s, was started (job %s).",
			count(d.n-1, d.more), ts(d.first), ts(d.prev), ts(d.last), name)}
		out.skipped.Time.Time = d.prev
	}
	return out
}
