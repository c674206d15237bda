package tenantrbac

import (
	"context"
	"fmt"
	"slices"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// maxDepth bounds the walk up the parent labels (a cycle set by hand ends
// there).
const maxDepth = 64

// CacheByObject are the cache options the manager needs for this package:
// RoleBindings, ServiceAccounts and ClusterRoleBindings are cached only
// when cozystack-controller wrote them, ClusterRoles only when they are a
// catalog's installer role (v1alpha1.InstallerRoleLabel).
func CacheByObject() map[client.Object]cache.ByObject {
	owned := labels.SelectorFromSet(labels.Set{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController})
	installers := labels.SelectorFromSet(labels.Set{v1alpha1.InstallerRoleLabel: "true"})
	return map[client.Object]cache.ByObject{
		&rbacv1.RoleBinding{}:        {Label: owned},
		&rbacv1.ClusterRoleBinding{}: {Label: owned},
		&corev1.ServiceAccount{}:     {Label: owned},
		&rbacv1.ClusterRole{}:        {Label: installers},
	}
}

// Setup registers the reconciler with mgr, whose cache must include
// CacheByObject and whose scheme must know helm.toolkit.fluxcd.io/v2
// (a terminating namespace's HelmReleases decide when its installers go).
func Setup(mgr ctrl.Manager) error {
	r := &reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), recorder: mgr.GetEventRecorder("cozystack-controller")}
	tenant := func(obj client.Object) bool {
		_, ok := obj.GetLabels()[v1alpha1.LabelTenant]
		return ok
	}
	// A namespace that stops being a tenant matters too: it is unbound.
	isTenant := predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return tenant(e.Object) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return tenant(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return tenant(e.ObjectOld) || tenant(e.ObjectNew) },
		GenericFunc: func(e event.GenericEvent) bool { return tenant(e.Object) },
	}
	// A namespace's change concerns its descendants too (their subjects
	// hold its groups).
	withDescendants := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		names, err := r.descendants(ctx, obj.GetName())
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing tenant namespaces")
		}
		reqs := []reconcile.Request{{NamespacedName: client.ObjectKey{Name: obj.GetName()}}}
		for _, n := range names {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: n}})
		}
		return reqs
	})
	// An object of ours changed or went: its namespace again.
	// What was written for a tenant namespace outside it (a release
	// storage namespace and its RoleBinding, the ClusterRoleBinding)
	// names it by labelNamespace.
	toNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		ns := obj.GetLabels()[labelNamespace]
		if ns == "" {
			ns = obj.GetNamespace()
		}
		if ns == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: ns}}}
	})
	// A catalog's installer role came or went: every tenant namespace.
	toTenants := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		var list corev1.NamespaceList
		if err := r.client.List(ctx, &list, client.HasLabels{v1alpha1.LabelTenant}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing tenant namespaces")
			return nil
		}
		reqs := make([]reconcile.Request, len(list.Items))
		for i, ns := range list.Items {
			reqs[i] = reconcile.Request{NamespacedName: client.ObjectKey{Name: ns.Name}}
		}
		return reqs
	})
	// A namespace's deletion starts its installers' countdown; its
	// recorded parent matters too.
	deleting := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil) ||
			!slices.Equal(e.ObjectOld.GetOwnerReferences(), e.ObjectNew.GetOwnerReferences())
	}}
	// A HelmRelease going from a terminating namespace may be its last.
	// Where a release keeps its records, and as whom it installs, decide
	// its installer's storage rights (storageGuests).
	releases := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld.(*helmv2.HelmRelease), e.ObjectNew.(*helmv2.HelmRelease)
			return n.GetDeletionTimestamp() != nil || o.Spec.ServiceAccountName != n.Spec.ServiceAccountName ||
				o.Spec.StorageNamespace != n.Spec.StorageNamespace
		},
		DeleteFunc: func(event.DeleteEvent) bool { return true },
	}
	return ctrl.NewControllerManagedBy(mgr).Named("tenant-rbac").
		Watches(&rbacv1.ClusterRole{}, toTenants, builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&corev1.Namespace{}, withDescendants, builder.WithPredicates(isTenant, predicate.Or[client.Object](predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, deleting))).
		Watches(&helmv2.HelmRelease{}, toNamespace, builder.WithPredicates(releases)).
		Watches(&corev1.Namespace{}, toNamespace, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			return obj.GetLabels()[labelNamespace] != "" && obj.GetLabels()[v1alpha1.LabelManagedBy] == v1alpha1.ManagedByController
		}))).
		Watches(&rbacv1.RoleBinding{}, toNamespace).
		Watches(&rbacv1.ClusterRoleBinding{}, toNamespace).
		Watches(&corev1.ServiceAccount{}, toNamespace).
		Complete(r)
}

// labelNamespace names, on a ClusterRoleBinding, the tenant namespace it
// was written for.
const labelNamespace = "cozystack.io/tenant-namespace"

type reconciler struct {
	client client.Client
	// reader reads past the cache what decides a recorded parent.
	reader   client.Reader
	recorder recorder.EventRecorder
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns := &corev1.Namespace{}
	if err := r.client.Get(ctx, req.NamespacedName, ns); apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	} else if err != nil {
		return reconcile.Result{}, err
	}
	if ns.DeletionTimestamp != nil {
		// What was written here goes with the namespace, but only after
		// the last release that installs as it (FinalizerTenantReleases);
		// the ClusterRoleBinding is owned by the namespace, so garbage
		// collection takes it after the namespace is gone.
		_, err := r.releaseFinalizers(ctx, ns.Name)
		return reconcile.Result{}, err
	}
	if strings.HasPrefix(ns.Name, v1alpha1.ReleaseStorageNamespacePrefix) {
		// A release storage namespace is never a tenant namespace; what
		// it holds is its tenant namespace's.
		return reconcile.Result{}, nil
	}
	if _, ok := ns.Labels[v1alpha1.LabelTenant]; !ok {
		// No longer a tenant: no tenant group or installer keeps rights
		// here.
		return reconcile.Result{}, r.unbind(ctx, ns.Name)
	}
	if ns.Labels[v1alpha1.LabelParent] != "" && ParentOwner(ns) == nil {
		// First seen: the parent the label names becomes an ancestor only
		// once verified and recorded by UID.
		if err := r.recordParent(ctx, ns); err != nil {
			return reconcile.Result{}, err
		}
	}
	ancestors, err := Ancestors(ctx, r.client, ns)
	if err != nil {
		return reconcile.Result{}, err
	}
	installers, err := r.installers(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	guests, err := r.storageGuests(ctx, ns.Name, installers)
	if err != nil {
		return reconcile.Result{}, err
	}
	want := Objects(ns, append([]string{ns.Name}, ancestors...), installers, guests)
	for _, obj := range want {
		if err := r.client.Patch(ctx, obj, client.Apply, client.FieldOwner(v1alpha1.FieldManagerController), client.ForceOwnership); err != nil {
			return reconcile.Result{}, fmt.Errorf("apply %s %s in %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), ns.Name, err)
		}
	}
	return reconcile.Result{}, r.prune(ctx, ns.Name, want)
}
