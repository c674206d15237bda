package plan

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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

// Reconcile runs one pass over a Plan: observe its jobs, decide and act
// on the schedule (decide), apply retention (retain), and apply the whole
// status as v1alpha1.CoreFieldManager. It requeues at the next scheduled
// time.
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
	status := v1alpha1.PlanStatus{
		ObservedGeneration: plan.Generation,
		LastScheduleTime:   plan.Status.LastScheduleTime,
		LastSkipped:        plan.Status.LastSkipped,
		LastSuccessfulTime: later(plan.Status.LastSuccessfulTime, obs.lastSuccessful),
	}
	sched, invalid := parseSchedule(plan.Spec.Schedule, now)
	sum := summary{generation: plan.Generation, invalid: invalid, suspend: plan.Spec.Suspend, loc: sched.loc}
	var result reconcile.Result
	var retainErr error
	if invalid != nil {
		// Nothing is scheduled, and without a time zone retention has no
		// days: its condition stays as it was.
		sum.previous = apimeta.FindStatusCondition(plan.Status.Conditions, v1alpha1.ConditionRetention)
	} else {
		d := decide(r.input(plan, sched, now, obs))
		for _, name := range d.cancel {
			if err := r.cancel(ctx, plan, obs.jobs[name]); err != nil {
				return reconcile.Result{}, err
			}
		}
		if d.start {
			if _, err := r.start(ctx, plan, d.scheduled, &obs); err != nil {
				return reconcile.Result{}, err
			}
			status.LastScheduleTime = &metav1.Time{Time: d.scheduled}
		}
		if d.skipped != nil {
			status.LastSkipped = d.skipped
			typ := corev1.EventTypeNormal
			if d.skipped.Reason == v1alpha1.ReasonMissedSchedule {
				typ = corev1.EventTypeWarning
			}
			r.event(plan, typ, d.skipped.Reason, "Schedule", "%s", d.skipped.Message)
		}
		status.NextScheduleTime = &metav1.Time{Time: d.next}
		sum.next = d.next
		ret, err := r.retain(ctx, plan, sched.loc, now)
		if err == nil || ret.condition.Type != "" {
			sum.retention = &ret
		} else {
			sum.previous = apimeta.FindStatusCondition(plan.Status.Conditions, v1alpha1.ConditionRetention)
		}
		retainErr = err
		result.RequeueAfter = d.next.Sub(now) + requeueDelta
	}
	status.Active = obs.active
	status.Conditions = apply.Conditions(plan.Status.Conditions, now, sum.conditions()...)
	if err := r.writeStatus(ctx, plan, status); err != nil {
		return reconcile.Result{}, errors.Join(err, retainErr)
	}
	if retainErr != nil {
		return reconcile.Result{}, retainErr
	}
	return result, nil
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
