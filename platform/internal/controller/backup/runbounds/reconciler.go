package runbounds

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

type reconciler struct {
	kind kind
	// client reads through the manager's cache and writes.
	client client.Client
	// live reads the API server directly, before a write.
	live     client.Reader
	clock    clock.PassiveClock
	resync   time.Duration
	recorder recorder.EventRecorder
}

// bounded reports whether j's run is bounded here: bound, not terminal,
// not being deleted.
func (r *reconciler) bounded(j job) bool {
	st := r.kind.status(j)
	return st.Binding != nil && !st.Phase.Terminal() && j.GetDeletionTimestamp() == nil
}

// Reconcile bounds one job's run and requeues it at its next deadline.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.kind.newObj()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !r.bounded(obj) {
		return ctrl.Result{}, nil
	}
	now := r.clock.Now()
	v := evaluate(r.kind.status(obj), now)
	_, changed, err := r.intent(obj, v, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	if changed {
		// Decide again on the job as it is now, so the intent resends
		// only values the core still owns.
		cur := r.kind.newObj()
		if err := r.live.Get(ctx, req.NamespacedName, cur); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		if !r.bounded(cur) {
			return ctrl.Result{}, nil
		}
		v = evaluate(r.kind.status(cur), now)
		if err := r.write(ctx, cur, v, now); err != nil {
			return ctrl.Result{}, err
		}
	}
	if v.fail != nil {
		return ctrl.Result{}, nil
	}
	var after time.Duration
	if !v.next.IsZero() {
		after = max(v.next.Sub(now), 100*time.Millisecond)
	}
	if r.resync > 0 && (after == 0 || after > r.resync) {
		after = r.resync
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// write applies the core's intent for obj under v when it changes what
// the core owns, and emits an event for a new failure or stall.
func (r *reconciler) write(ctx context.Context, obj job, v verdict, now time.Time) error {
	in, changed, err := r.intent(obj, v, now)
	if err != nil || !changed {
		return err
	}
	if err := apply.Status(ctx, r.client, obj, in, backupsv1alpha1.CoreFieldManager); err != nil {
		return fmt.Errorf("write the status of %s %s/%s: %w", r.kind.name, obj.GetNamespace(), obj.GetName(), err)
	}
	if r.recorder == nil {
		return nil
	}
	switch prev := conditions.Get(obj, backupsv1alpha1.ConditionStalled); {
	case v.fail != nil:
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, v.fail.reason, "BoundRun", "%s", v.fail.message)
	case v.stall != nil && (prev == nil || prev.Reason != v.stall.reason):
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, v.stall.reason, "BoundRun", "%s", v.stall.message)
	}
	return nil
}

// intent returns the core's whole status intent for obj under v at now
// (the fields it owns, with the bounds' changes) and whether it differs
// from what the core owns now.
func (r *reconciler) intent(obj job, v verdict, now time.Time) (map[string]any, bool, error) {
	in, err := ownedStatus(obj, backupsv1alpha1.CoreFieldManager)
	if err != nil {
		return nil, false, err
	}
	before := runtime.DeepCopyJSON(in)
	work := obj.DeepCopyObject().(job)
	if v.claimed {
		// The driver holds the run: the core no longer says it waits.
		removeCondition(in, backupsv1alpha1.ConditionReconciling)
	}
	if v.stall != nil {
		conditions.MarkTrue(work, backupsv1alpha1.ConditionStalled, v.stall.reason, "%s", v.stall.message)
		if err := setCondition(in, conditions.Get(work, backupsv1alpha1.ConditionStalled)); err != nil {
			return nil, false, err
		}
	} else {
		removeCondition(in, backupsv1alpha1.ConditionStalled)
	}
	if v.fail != nil {
		conditions.MarkFalse(work, backupsv1alpha1.ConditionReady, v.fail.reason, "%s", v.fail.message)
		if err := setCondition(in, conditions.Get(work, backupsv1alpha1.ConditionReady)); err != nil {
			return nil, false, err
		}
		removeCondition(in, backupsv1alpha1.ConditionReconciling)
		in["phase"] = string(backupsv1alpha1.PhaseFailed)
		in["completionTime"] = now.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	changed := !sameJSON(before, in)
	if changed {
		in["observedGeneration"] = obj.GetGeneration()
	}
	return in, changed, nil
}

// setCondition puts c into the conditions list of the status intent in,
// replacing the entry of its type.
func setCondition(in map[string]any, c *metav1.Condition) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		return err
	}
	list, _ := in["conditions"].([]any)
	for i, e := range list {
		if em, _ := e.(map[string]any); em["type"] == c.Type {
			list[i] = m
			in["conditions"] = list
			return nil
		}
	}
	in["conditions"] = append(list, m)
	return nil
}

// removeCondition drops the entry of type t from the status intent in.
func removeCondition(in map[string]any, t string) {
	list, _ := in["conditions"].([]any)
	out := make([]any, 0, len(list))
	for _, e := range list {
		if em, _ := e.(map[string]any); em["type"] != t {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		delete(in, "conditions")
		return
	}
	in["conditions"] = out
}
