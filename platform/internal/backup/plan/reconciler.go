package plan

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"cozystack.io/platform/internal/backup/retention"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// requeueDelta pads the requeue at the next scheduled time, as batch/v1
// CronJob does, so the reconcile does not come a hair early.
const requeueDelta = 100 * time.Millisecond

type reconciler struct {
	// client reads jobs, Backups and drivers from the cache and writes.
	client client.Client
	// reader reads the Plan and a conflicting job from the API server:
	// the Plan's status is the scheduler's memory, so a stale copy could
	// record a run twice.
	reader   client.Reader
	clock    clock.PassiveClock
	recorder events.EventRecorder
}

// Reconcile runs one pass over a Plan: observe its jobs, act on the
// schedule (schedule), apply retention (retain), and apply the whole
// status as v1alpha1.CoreFieldManager (summarize). It requeues at the
// next scheduled time.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	plan := &v1alpha1.Plan{}
	if err := r.reader.Get(ctx, req.NamespacedName, plan); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if plan.DeletionTimestamp != nil {
		// Its BackupJobs are collected with it (owner references).
		return reconcile.Result{}, nil
	}
	now := r.clock.Now()
	obs, err := r.observe(ctx, plan)
	if err != nil {
		return reconcile.Result{}, err
	}
	sched, invalid := parseSchedule(plan.Spec.Schedule, now)
	p := newPass(plan, now, obs, sched, invalid)
	if invalid != nil {
		// Nothing is scheduled, and without a time zone retention has no
		// days: its condition stays as it was.
		p.keepRetention()
		return r.summarize(ctx, p, nil)
	}
	if err := r.schedule(ctx, p, sched); err != nil {
		return reconcile.Result{}, err
	}
	return r.summarize(ctx, p, r.retain(ctx, p, sched.loc))
}

// pass is what one Reconcile of a Plan carries from step to step.
type pass struct {
	plan   *v1alpha1.Plan
	now    time.Time
	obs    observed
	status v1alpha1.PlanStatus
	sum    summary
	result reconcile.Result
}

// newPass starts the Plan's status from the fields a pass keeps unless it
// acts: the last scheduled and skipped runs, and the later of the last
// successful times recorded and observed.
func newPass(plan *v1alpha1.Plan, now time.Time, obs observed, sched schedule, invalid *field.Error) *pass {
	return &pass{
		plan: plan, now: now, obs: obs,
		status: v1alpha1.PlanStatus{
			ObservedGeneration: plan.Generation,
			LastScheduleTime:   plan.Status.LastScheduleTime,
			LastSkipped:        plan.Status.LastSkipped,
			LastSuccessfulTime: later(plan.Status.LastSuccessfulTime, obs.lastSuccessful),
		},
		sum: summary{generation: plan.Generation, invalid: invalid, suspend: plan.Spec.Suspend, loc: sched.loc},
	}
}

// keepRetention keeps the Plan's Retention condition as it was.
func (p *pass) keepRetention() {
	p.sum.previous = apimeta.FindStatusCondition(p.plan.Status.Conditions, v1alpha1.ConditionRetention)
}

// schedule decides on the schedule (decide) and acts: cancels the jobs
// Replace cancels, starts the run that is due, records a skipped run (and
// its event), and requeues at the next scheduled time.
func (r *reconciler) schedule(ctx context.Context, p *pass, sched schedule) error {
	d := decide(r.input(p.plan, sched, p.now, p.obs))
	for _, name := range d.cancel {
		if err := r.cancel(ctx, p.plan, p.obs.jobs[name]); err != nil {
			return err
		}
	}
	if d.start {
		if _, err := r.start(ctx, p.plan, d.scheduled, &p.obs); err != nil {
			return err
		}
		p.status.LastScheduleTime = &metav1.Time{Time: d.scheduled}
	}
	if d.skipped != nil {
		p.status.LastSkipped = d.skipped
		typ := corev1.EventTypeNormal
		if d.skipped.Reason == v1alpha1.ReasonMissedSchedule {
			typ = corev1.EventTypeWarning
		}
		r.event(p.plan, typ, d.skipped.Reason, "Schedule", "%s", d.skipped.Message)
	}
	p.status.NextScheduleTime = &metav1.Time{Time: d.next}
	p.sum.next = d.next
	p.result.RequeueAfter = d.next.Sub(p.now) + requeueDelta
	return nil
}

// retain applies the Plan's retention (retention.Apply) in loc. Its
// outcome makes the Retention condition when it has one; otherwise the
// condition stays as it was. The error is returned after the status is
// written.
func (r *reconciler) retain(ctx context.Context, p *pass, loc *time.Location) error {
	ret, err := retention.Apply(ctx, r.client, p.plan, loc, p.now)
	if err == nil || ret.Condition.Type != "" {
		p.sum.retention = &ret
	} else {
		p.keepRetention()
	}
	return err
}

// summarize applies the pass's status, its conditions derived from the
// summary, and returns the pass's result or the errors of retention and
// of the write.
func (r *reconciler) summarize(ctx context.Context, p *pass, retainErr error) (reconcile.Result, error) {
	p.status.Active = p.obs.active
	p.status.Conditions = apply.Conditions(p.plan.Status.Conditions, p.now, p.sum.conditions()...)
	if err := r.writeStatus(ctx, p.plan, p.status); err != nil {
		return reconcile.Result{}, errors.Join(err, retainErr)
	}
	if retainErr != nil {
		return reconcile.Result{}, retainErr
	}
	return p.result, nil
}

// input gathers what decide needs. The earliest time a run may be due
// after is the latest of the Plan's creation, its last started run and
// its last skipped run: each run is acted on once.
func (r *reconciler) input(plan *v1alpha1.Plan, sched schedule, now time.Time, obs observed) decideInput {
	earliest := plan.CreationTimestamp.Time
	if t := plan.Status.LastScheduleTime; t != nil && t.After(earliest) {
		earliest = t.Time
	}
	if s := plan.Status.LastSkipped; s != nil && s.Time.After(earliest) {
		earliest = s.Time.Time
	}
	deadline := DefaultStartingDeadline
	if s := plan.Spec.StartingDeadlineSeconds; s != nil {
		deadline = time.Duration(*s) * time.Second
	}
	policy := plan.Spec.ConcurrencyPolicy
	if policy == "" {
		policy = v1alpha1.ForbidConcurrent
	}
	return decideInput{
		plan: plan.Name, sched: sched, now: now, deadline: deadline, suspend: plan.Spec.Suspend,
		policy: policy, earliest: earliest, active: obs.active,
		exists: func(name string) bool { _, ok := obs.jobs[name]; return ok },
	}
}

func (r *reconciler) event(obj runtime.Object, typ, reason, action, format string, args ...any) {
	if r.recorder != nil {
		r.recorder.Eventf(obj, nil, typ, reason, action, format, args...)
	}
}
