package tenantquota

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/quotatree"
)

// Name is the controller's name (cozystack-controller --controllers).
const Name = "tenantquota"

// FieldManager is the server-side apply field manager of the quotas this
// package writes.
const FieldManager = "cozystack-controller-tenantquota"

// ReasonChildrenExceedLimit is the reason of the Warning event on a
// tenant-subtree quota whose namespace's children hold more than its
// limit.
const ReasonChildrenExceedLimit = "ChildrenExceedLimit"

// Setup registers the reconciler with mgr. ResourceQuotas are read
// through the manager's API reader (uncached), so the cache options of
// other packages for ResourceQuotas do not matter; their events, as the
// cache sees them, only trigger reconciles.
func Setup(mgr ctrl.Manager) error {
	r := &reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), recorder: mgr.GetEventRecorder(FieldManager)}
	isTenant := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		_, ok := obj.GetLabels()[v1alpha1.LabelTenant]
		return ok
	})
	isTenantRelease := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return obj.GetLabels()[v1alpha1.LabelApplicationKind] == quotatree.TenantKind
	})
	isQuota := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return obj.GetName() == quotatree.TenantQuotaName || obj.GetName() == quotatree.SubtreeQuotaName
	})
	// A Tenant's HelmRelease sets its own namespace's limit and takes
	// from its parent's.
	fromRelease := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		reqs := []reconcile.Request{{NamespacedName: client.ObjectKey{Name: obj.GetNamespace()}}}
		var own corev1.NamespaceList
		if err := r.client.List(ctx, &own, client.MatchingLabels{
			v1alpha1.LabelParent: obj.GetNamespace(), v1alpha1.LabelTenant: obj.GetLabels()[v1alpha1.LabelApplicationName],
		}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing the namespace of a Tenant")
		}
		for _, n := range own.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: n.Name}})
		}
		return reqs
	})
	toNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: obj.GetNamespace()}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&corev1.Namespace{}, builder.WithPredicates(isTenant)).
		Watches(&helmv2.HelmRelease{}, fromRelease, builder.WithPredicates(isTenantRelease)).
		Watches(&corev1.ResourceQuota{}, toNamespace, builder.WithPredicates(isQuota)).
		Complete(r)
}

type reconciler struct {
	client   client.Client
	reader   client.Reader
	recorder recorder.EventRecorder
}

// Reconcile writes or deletes the tenant-subtree quota of tenant namespace
// req.Name.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	n := &corev1.Namespace{}
	if err := r.client.Get(ctx, req.NamespacedName, n); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if n.DeletionTimestamp != nil {
		return reconcile.Result{}, nil // the quota goes with the namespace
	}
	var limits map[corev1.ResourceName]quotatree.Bound
	if _, ok := n.Labels[v1alpha1.LabelTenant]; ok {
		owner, err := quotatree.Owner(ctx, r.client, n)
		if err != nil {
			return reconcile.Result{}, err
		}
		if limits, err = quotatree.Limits(ctx, r.reader, n, owner); err != nil {
			return reconcile.Result{}, err
		}
	}
	if len(limits) == 0 {
		return reconcile.Result{}, r.deleteQuota(ctx, n.Name)
	}
	children, err := quotatree.Children(ctx, r.client, n.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	hard := corev1.ResourceList{}
	var over []string
	for _, name := range slices.Sorted(maps.Keys(limits)) {
		b := limits[name]
		given, who := quotatree.Given(children, name)
		left := b.Quantity.DeepCopy()
		left.Sub(given)
		if left.Sign() < 0 {
			over = append(over, fmt.Sprintf("%s: they hold %s (%s), the limit is %s (%s)", name, given.String(), who, b.Quantity.String(), b.Source))
			left = resource.Quantity{Format: b.Quantity.Format}
		}
		hard[name] = left
	}
	ac := corev1ac.ResourceQuota(quotatree.SubtreeQuotaName, n.Name).
		WithLabels(map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController}).
		WithSpec(corev1ac.ResourceQuotaSpec().WithHard(hard))
	if err := r.client.Apply(ctx, ac, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return reconcile.Result{}, fmt.Errorf("applying ResourceQuota %s/%s: %w", n.Name, quotatree.SubtreeQuotaName, err)
	}
	if len(over) > 0 {
		rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: n.Name, Name: quotatree.SubtreeQuotaName}}
		if err := r.reader.Get(ctx, client.ObjectKeyFromObject(rq), rq); err == nil {
			r.recorder.Eventf(rq, nil, corev1.EventTypeWarning, ReasonChildrenExceedLimit, "LimitSubtree",
				"the child Tenants of namespace %s hold more than its limits, so its own use is limited to 0 of each (%s): %s; lower the children's spec.resourceQuotas or raise the namespace's",
				n.Name, quotatree.Rule, strings.Join(over, "; "))
		}
	}
	return reconcile.Result{}, nil
}

// deleteQuota deletes namespace ns's tenant-subtree quota when this
// package wrote it.
func (r *reconciler) deleteQuota(ctx context.Context, ns string) error {
	rq := &corev1.ResourceQuota{}
	if err := r.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: quotatree.SubtreeQuotaName}, rq); err != nil {
		return client.IgnoreNotFound(err)
	}
	if rq.Labels[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByController {
		return nil
	}
	if err := r.client.Delete(ctx, rq, client.Preconditions{UID: &rq.UID}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
