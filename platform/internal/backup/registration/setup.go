package registration

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/backup/drivers"
	"cozystack.io/platform/internal/operator/names"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// Name is the controller's name (logs, metrics, events).
const Name = "backup-driver-registration"

// Setup registers the reconciler with mgr, whose scheme must know
// backups.cozystack.io, cozystack.io and coordination.k8s.io. Errors are
// the controller builder's.
func Setup(mgr ctrl.Manager) error {
	r := &reconciler{client: mgr.GetClient(), resolver: &drivers.Resolver{Reader: mgr.GetClient()},
		recorder: mgr.GetEventRecorder(Name)}
	all := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		var list backupsv1alpha1.BackupDriverList
		if err := r.client.List(ctx, &list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing BackupDrivers")
			return nil
		}
		reqs := make([]reconcile.Request, len(list.Items))
		for i := range list.Items {
			reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
		}
		return reqs
	})
	labelled := func(key string, annotation bool) predicate.Predicate {
		return predicate.NewPredicateFuncs(func(o client.Object) bool {
			if annotation {
				_, ok := o.GetAnnotations()[key]
				return ok
			}
			_, ok := o.GetLabels()[key]
			return ok
		})
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named(Name).
		For(&backupsv1alpha1.BackupDriver{}).
		Watches(&coordinationv1.Lease{}, all, builder.WithPredicates(labelled(backupsv1alpha1.LabelDriver, false))).
		Watches(&corev1.Namespace{}, all, builder.WithPredicates(labelled(names.AnnotationPackage, true))).
		Watches(&v1alpha1.Package{}, all).
		Watches(&v1alpha1.PackageSource{}, all).
		Complete(r); err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}

type reconciler struct {
	client   client.Client
	resolver *drivers.Resolver
	recorder recorder.EventRecorder
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	d := &backupsv1alpha1.BackupDriver{}
	if err := r.client.Get(ctx, req.NamespacedName, d); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	a, err := r.resolver.Accept(ctx, d)
	if err != nil {
		return reconcile.Result{}, err
	}
	status := summarize(d, a, time.Now())
	if equality.Semantic.DeepEqual(apply.Owned(d.Status.Conditions, backupsv1alpha1.ConditionAccepted), status.Conditions) &&
		d.Status.Catalog == a.Catalog && d.Status.Package == a.Package && d.Status.Component == a.Component {
		return reconcile.Result{}, nil
	}
	if err := apply.Status(ctx, r.client, d, status, backupsv1alpha1.CoreFieldManager); err != nil {
		return reconcile.Result{}, err
	}
	if !a.Accepted() {
		r.recorder.Eventf(d, nil, corev1.EventTypeWarning, a.Reason, "Register", "%s", a.Message)
	}
	return reconcile.Result{}, nil
}

// summarize returns the core's status of d under a at now: Accepted (True
// when a accepts d) and the catalog, package and component that installed
// d.
func summarize(d *backupsv1alpha1.BackupDriver, a drivers.Acceptance, now time.Time) backupsv1alpha1.BackupDriverStatus {
	accepted := metav1.ConditionTrue
	if !a.Accepted() {
		accepted = metav1.ConditionFalse
	}
	return backupsv1alpha1.BackupDriverStatus{
		Conditions: apply.Conditions(d.Status.Conditions, now,
			apply.Condition(backupsv1alpha1.ConditionAccepted, accepted, a.Reason, d.Generation, "%s", a.Message)),
		Catalog:   a.Catalog,
		Package:   a.Package,
		Component: a.Component,
	}
}
