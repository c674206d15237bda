package clustervalues

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// LegacySecret says whether the legacy Secret cozystack-values is written
// beside the ConfigMap (the dual-write window of k2-migration.md).
type LegacySecret string

const (
	// LegacySecretOff writes only the ConfigMap; existing Secrets are left
	// as they are (and go stale).
	LegacySecretOff LegacySecret = "off"
	// LegacySecretWrite also keeps a Secret cozystack-values equal to the
	// ConfigMap in every tenant namespace.
	LegacySecretWrite LegacySecret = "write"
)

// Options configure the projection.
type Options struct {
	// LegacySecret: LegacySecretOff (the default when empty) or
	// LegacySecretWrite.
	LegacySecret LegacySecret
	// Concurrency is how many tenant namespaces are written in parallel
	// (default 8).
	Concurrency int
	// StatusInterval is the least time between two writes of the
	// ClusterValues status while namespaces are being written (default
	// 500ms); a converged or stalled status is written at once.
	StatusInterval time.Duration
}

// CacheOptions are the cache options a manager running the projection
// needs: ConfigMaps and Secrets are cached only when they carry
// app.kubernetes.io/managed-by=cozystack-controller, so the controller
// neither holds every Secret of the cluster in memory nor is allowed to
// need to.
func CacheOptions() cache.Options {
	owned := labels.SelectorFromSet(labels.Set{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController})
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {Label: owned},
		&corev1.Secret{}:    {Label: owned},
	}}
}

// Setup registers the three reconcilers of the projection with mgr, whose
// cache must have been built with CacheOptions and whose scheme must know
// core, cozystack.io/v1alpha1 and helm.toolkit.fluxcd.io/v2 kinds. It
// returns an error for an unknown LegacySecret or when a controller cannot
// be built.
func Setup(mgr ctrl.Manager, o Options) error {
	switch o.LegacySecret {
	case "":
		o.LegacySecret = LegacySecretOff
	case LegacySecretOff, LegacySecretWrite:
	default:
		return fmt.Errorf("legacy secret mode %q: want %q or %q", o.LegacySecret, LegacySecretOff, LegacySecretWrite)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.StatusInterval <= 0 {
		o.StatusInterval = 500 * time.Millisecond
	}
	legacy := o.LegacySecret == LegacySecretWrite
	c := mgr.GetClient()
	fails := newFailures()
	render := newRenderer()
	rec := mgr.GetEventRecorder("cozystack-controller")

	isTenantObj := func(obj client.Object) bool {
		_, ok := obj.GetLabels()[v1alpha1.LabelTenant]
		return ok
	}
	tenant := predicate.NewPredicateFuncs(isTenantObj)
	// For counting, a namespace that stops being a tenant matters too.
	wasOrIsTenant := predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return isTenantObj(e.Object) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return isTenantObj(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return isTenantObj(e.ObjectOld) || isTenantObj(e.ObjectNew) },
		GenericFunc: func(e event.GenericEvent) bool { return isTenantObj(e.Object) },
	}
	values := predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetName() == v1alpha1.ValuesName })
	// A values object's event concerns its namespace.
	toNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: obj.GetNamespace()}}}
	})
	// A new generation of the source concerns every tenant namespace.
	toTenants := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		tenants, err := listTenants(ctx, c)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing tenant namespaces")
			return nil
		}
		reqs := make([]reconcile.Request, len(tenants))
		for i, ns := range tenants {
			reqs[i] = reconcile.Request{NamespacedName: client.ObjectKey{Name: ns.Name}}
		}
		return reqs
	})
	toSource := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: v1alpha1.ClusterValuesName}}}
	})
	singleton := predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetName() == v1alpha1.ClusterValuesName })
	specChanged := builder.WithPredicates(singleton, predicate.GenerationChangedPredicate{})

	err := ctrl.NewControllerManagedBy(mgr).Named("clustervalues-namespace").
		For(&corev1.Namespace{}, builder.WithPredicates(tenant)).
		Watches(&corev1.ConfigMap{}, toNamespace, builder.WithPredicates(values)).
		Watches(&corev1.Secret{}, toNamespace, builder.WithPredicates(values)).
		Watches(&v1alpha1.ClusterValues{}, toTenants, specChanged).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.Concurrency}).
		Complete(&namespaceReconciler{client: c, reader: mgr.GetAPIReader(), legacy: legacy, failures: fails, render: render})
	if err != nil {
		return err
	}

	err = ctrl.NewControllerManagedBy(mgr).Named("clustervalues-status").
		For(&v1alpha1.ClusterValues{}, specChanged).
		Watches(&corev1.Namespace{}, toSource, builder.WithPredicates(wasOrIsTenant)).
		Watches(&corev1.ConfigMap{}, toSource, builder.WithPredicates(values)).
		Watches(&corev1.Secret{}, toSource, builder.WithPredicates(values)).
		WatchesRawSource(source.Channel(fails.poke, &handler.EnqueueRequestForObject{})).
		Complete(&statusReconciler{client: c, recorder: rec, legacy: legacy, failures: fails, render: render, interval: o.StatusInterval})
	if err != nil {
		return err
	}

	return ctrl.NewControllerManagedBy(mgr).Named("clustervalues-source").
		For(&corev1.Namespace{}, builder.WithPredicates(tenant)).
		Watches(&helmv2.HelmRelease{}, toNamespace).
		Watches(&corev1.ConfigMap{}, toNamespace, builder.WithPredicates(values)).
		Watches(&corev1.Secret{}, toNamespace, builder.WithPredicates(values)).
		Watches(&v1alpha1.ClusterValues{}, toTenants, specChanged).
		Complete(&valuesSourceReconciler{client: c, recorder: rec, legacy: legacy, render: render})
}
