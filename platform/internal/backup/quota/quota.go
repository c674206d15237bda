package quota

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// Name is the controller's name (logs, metrics) and the ResourceQuota's.
const Name = "cozy-backup-objects"

// The default limits per tenant namespace.
const (
	DefaultPlans       = 100
	DefaultBackupJobs  = 1000
	DefaultBackups     = 1000
	DefaultRestoreJobs = 100
	// DefaultResync is how often a quota is applied again without a
	// change of its namespace (it is not watched).
	DefaultResync = 10 * time.Minute
)

// Options are the limits, per tenant namespace; 0 leaves that kind
// unbounded. Options{} means none at all: use Defaults.
type Options struct {
	Plans, BackupJobs, Backups, RestoreJobs int64
	// Resync is the longest time between two applies of a namespace's
	// quota (default DefaultResync).
	Resync time.Duration
}

// Defaults returns the default limits.
func Defaults() Options {
	return Options{Plans: DefaultPlans, BackupJobs: DefaultBackupJobs, Backups: DefaultBackups, RestoreJobs: DefaultRestoreJobs}
}

// Hard returns the quota's spec.hard for o: count/<plural>.backups.cozystack.io
// of each non-zero limit.
func (o Options) Hard() corev1.ResourceList {
	hard := corev1.ResourceList{}
	for plural, n := range map[string]int64{"plans": o.Plans, "backupjobs": o.BackupJobs, "backups": o.Backups, "restorejobs": o.RestoreJobs} {
		if n > 0 {
			hard[corev1.ResourceName("count/"+plural+"."+backupsv1alpha1.GroupVersion.Group)] = *resource.NewQuantity(n, resource.DecimalSI)
		}
	}
	return hard
}

type reconciler struct {
	client client.Client
	o      Options
}

// Reconcile applies the quota to one tenant namespace.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := &corev1.Namespace{}
	if err := r.client.Get(ctx, req.NamespacedName, ns); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !isTenant(ns) || ns.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: Name,
		Labels: map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController}}}
	hard := map[string]string{}
	for k, v := range r.o.Hard() {
		hard[string(k)] = v.String()
	}
	if err := apply.Object(ctx, r.client, q, map[string]any{"spec": map[string]any{"hard": hard}}, backupsv1alpha1.CoreFieldManager); err != nil {
		return ctrl.Result{}, fmt.Errorf("apply ResourceQuota %s/%s: %w", ns.Name, Name, err)
	}
	return ctrl.Result{RequeueAfter: r.o.Resync}, nil
}

func isTenant(obj client.Object) bool {
	_, ok := obj.GetLabels()[v1alpha1.LabelTenant]
	return ok
}

// Setup registers the reconciler with mgr: it watches Namespaces (the
// manager's cache holds them) and writes ResourceQuotas without reading
// them. With every limit 0 it does nothing.
func Setup(mgr ctrl.Manager, o Options) error {
	if len(o.Hard()) == 0 {
		return nil
	}
	if o.Resync <= 0 {
		o.Resync = DefaultResync
	}
	r := &reconciler{client: mgr.GetClient(), o: o}
	return ctrl.NewControllerManagedBy(mgr).Named("backup-quota").
		For(&corev1.Namespace{}, builder.WithPredicates(predicate.NewPredicateFuncs(isTenant))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
}
