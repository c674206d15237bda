package plan

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// ControllerName is the name of the Plan controller (metrics, logs).
const ControllerName = "backup-plan"

// Options configure the Plan reconciler.
type Options struct {
	// Clock is the scheduler's clock; nil means the real one. Tests pass
	// a k8s.io/utils/clock/testing.FakeClock.
	Clock clock.PassiveClock
	// Concurrency is how many Plans are reconciled in parallel (default
	// 4).
	Concurrency int
}

// Setup registers the Plan reconciler with mgr, whose scheme must know
// backups.cozystack.io/v1alpha1. A Plan is reconciled when its spec,
// labels or annotations change (an annotation such as
// reconcile.fluxcd.io/requestedAt asks for a pass), when one of its
// BackupJobs is created, deleted, changes phase or is cancelled, when one
// of its Backups (label backups.cozystack.io/plan) comes, goes or changes
// readiness, when a BackupDriver's spec changes while the Plan's retention
// is held back (Retention=False), and at its next scheduled time. The
// errors are controller-runtime's.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	r := &reconciler{
		client:   mgr.GetClient(),
		reader:   mgr.GetAPIReader(),
		clock:    o.Clock,
		recorder: mgr.GetEventRecorder(v1alpha1.CoreFieldManager),
	}
	toPlan := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		name := obj.GetLabels()[v1alpha1.LabelPlan]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}}}
	})
	// A driver gaining Reclaim concerns the Plans whose retention is held
	// back.
	toHeldBack := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		var plans v1alpha1.PlanList
		if err := r.client.List(ctx, &plans); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing Plans")
			return nil
		}
		var reqs []reconcile.Request
		for _, p := range plans.Items {
			if apimeta.IsStatusConditionFalse(p.Status.Conditions, v1alpha1.ConditionRetention) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)})
			}
		}
		return reqs
	})
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&v1alpha1.Plan{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Owns(&v1alpha1.BackupJob{}, builder.WithPredicates(jobChanged)).
		Watches(&v1alpha1.Backup{}, toPlan, builder.WithPredicates(backupChanged)).
		Watches(&v1alpha1.BackupDriver{}, toHeldBack, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.Concurrency}).
		Complete(r)
}

// jobChanged passes a BackupJob's creation and deletion, and the updates
// the scheduler reads: phase, completion, cancel, deletion. A driver's
// progress reports do not wake the Plan.
var jobChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*v1alpha1.BackupJob)
		n, ok2 := e.ObjectNew.(*v1alpha1.BackupJob)
		if !ok1 || !ok2 {
			return true
		}
		return o.Status.Phase != n.Status.Phase || !o.Status.CompletionTime.Equal(n.Status.CompletionTime) ||
			o.Spec.Cancel != n.Spec.Cancel || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
	},
}

// backupChanged passes a Backup's creation and deletion, and the updates
// retention reads: the plan label, readiness, deletion.
var backupChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*v1alpha1.Backup)
		n, ok2 := e.ObjectNew.(*v1alpha1.Backup)
		if !ok1 || !ok2 {
			return true
		}
		return o.Labels[v1alpha1.LabelPlan] != n.Labels[v1alpha1.LabelPlan] ||
			apimeta.IsStatusConditionTrue(o.Status.Conditions, v1alpha1.ConditionReady) != apimeta.IsStatusConditionTrue(n.Status.Conditions, v1alpha1.ConditionReady) ||
			(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
	},
}
