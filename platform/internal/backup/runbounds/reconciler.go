package runbounds

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
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
	switch prev := apimeta.FindStatusCondition(r.kind.status(obj).Conditions, backupsv1alpha1.ConditionStalled); {
	case v.fail != nil:
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, v.fail.reason, "BoundRun", "%s", v.fail.message)
	case v.stall != nil && (prev == nil || prev.Reason != v.stall.reason):
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, v.stall.reason, "BoundRun", "%s", v.stall.message)
	}
	return nil
}

// intent returns the core's whole status intent for obj under v at now
// (the fields it owns, with the bounds' changes) and whether it differs
// from what the core owns now. Its conditions keep their lastTransitionTime
// while their status stays (apply.Conditions).
func (r *reconciler) intent(obj job, v verdict, now time.Time) (map[string]any, bool, error) {
	in, err := ownedStatus(obj, backupsv1alpha1.CoreFieldManager)
	if err != nil {
		return nil, false, err
	}
	before := runtime.DeepCopyJSON(in)
	owned, err := ownedConditions(in)
	if err != nil {
		return nil, false, err
	}
	gen := obj.GetGeneration()
	var set []metav1.Condition
	if v.stall != nil {
		set = append(set, apply.Condition(backupsv1alpha1.ConditionStalled, metav1.ConditionTrue, v.stall.reason, gen, "%s", v.stall.message))
	}
	if v.fail != nil {
		set = append(set, apply.Condition(backupsv1alpha1.ConditionReady, metav1.ConditionFalse, v.fail.reason, gen, "%s", v.fail.message))
		in["phase"] = string(backupsv1alpha1.PhaseFailed)
		in["completionTime"] = now.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	// What the core owns stays in place unless this pass replaces or
	// ends it: Reconciling ends once the driver holds the run or it fails,
	// Stalled when the run no longer stalls.
	var want []metav1.Condition
	for _, c := range owned {
		switch i := slices.IndexFunc(set, func(s metav1.Condition) bool { return s.Type == c.Type }); {
		case i >= 0:
			want = append(want, set[i])
			set = slices.Delete(set, i, i+1)
		case c.Type == backupsv1alpha1.ConditionReconciling && (v.claimed || v.fail != nil),
			c.Type == backupsv1alpha1.ConditionStalled:
		default:
			want = append(want, c)
		}
	}
	want = append(want, set...)
	conds := apply.Conditions(r.kind.status(obj).Conditions, now, want...)
	if len(conds) == 0 {
		delete(in, "conditions")
	} else {
		list := make([]any, len(conds))
		for i := range conds {
			if list[i], err = runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[i]); err != nil {
				return nil, false, err
			}
		}
		in["conditions"] = list
	}
	changed := !sameJSON(before, in)
	if changed {
		in["observedGeneration"] = obj.GetGeneration()
	}
	return in, changed, nil
}

// ownedConditions decodes the conditions of the status intent in.
func ownedConditions(in map[string]any) ([]metav1.Condition, error) {
	var st struct {
		Conditions []metav1.Condition `json:"conditions"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"conditions": in["conditions"]}, &st); err != nil {
		return nil, fmt.Errorf("conditions the core owns: %w", err)
	}
	return st.Conditions, nil
}
