package clustervalues

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// namespaceReconciler keeps the values objects of one tenant namespace
// (the request's name) equal to the document rendered from the current
// source. It writes only when an object is missing or differs, and writes
// nothing when the source is missing or invalid or the namespace's own
// values are invalid: the status reconciler reports those.
type namespaceReconciler struct {
	client client.Client
	// reader reads from the API server, for a values object the cache does
	// not hold because it lacks our label (written by someone else, or the
	// label was removed by hand).
	reader   client.Reader
	legacy   bool
	failures *failures
	render   *renderer
}

func (r *namespaceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	ns := &corev1.Namespace{}
	if err := r.client.Get(ctx, req.NamespacedName, ns); err != nil {
		if apierrors.IsNotFound(err) {
			r.failures.clear(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !isTenant(ns) {
		// Not (or no longer) a tenant namespace, or terminating: its
		// values objects, if any, are left as they are.
		r.failures.clear(ns.Name)
		return ctrl.Result{}, nil
	}
	cv, err := getSource(ctx, r.client)
	if err != nil || cv == nil {
		return ctrl.Result{}, err
	}
	cluster, err := r.render.renderCluster(cv)
	if err != nil {
		logger.V(1).Info("not projecting an invalid ClusterValues", "generation", cv.Generation, "error", err.Error())
		return ctrl.Result{}, nil
	}
	doc, err := r.render.renderNamespace(cluster, ns)
	if err != nil {
		logger.V(1).Info("not projecting into a namespace with invalid values", "error", err.Error())
		return ctrl.Result{}, nil
	}

	err = ensure(ctx, r.client, r.reader, desiredConfigMap(ns.Name, cv.Generation, doc), configMapUpToDate,
		func(have, want *corev1.ConfigMap) { have.Data, have.BinaryData = want.Data, nil })
	if err == nil && r.legacy {
		err = ensure(ctx, r.client, r.reader, desiredSecret(ns.Name, cv.Generation, doc), secretUpToDate,
			func(have, want *corev1.Secret) { have.Type, have.Data, have.StringData = want.Type, want.Data, nil })
	}
	switch {
	case apierrors.IsConflict(err):
		// Our cached copy was stale (typically our own write not seen
		// yet): read again soon. Not a failure worth reporting.
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	case err != nil:
		r.failures.set(ns.Name, err)
		return ctrl.Result{}, err
	}
	r.failures.clear(ns.Name)
	return ctrl.Result{}, nil
}

// conflictRetry is how soon a write that lost an optimistic-concurrency
// race is retried.
const conflictRetry = 50 * time.Millisecond

// ensure makes the object named like want equal to it: created when
// missing, updated (optimistically, from the version read) when
// upToDate(have, want) is false, untouched otherwise. apply copies want's
// content onto have; owned labels and annotations are merged, others kept.
func ensure[T client.Object](ctx context.Context, c client.Client, reader client.Reader, want T,
	upToDate func(have, want T) bool, apply func(have, want T)) error {
	kind := kindOf(want)
	have := want.DeepCopyObject().(T)
	key := client.ObjectKeyFromObject(want)
	err := c.Get(ctx, key, have)
	if apierrors.IsNotFound(err) {
		created := want.DeepCopyObject().(T)
		err = c.Create(ctx, created)
		if err == nil {
			metricWrites.WithLabelValues(kind, "create").Inc()
			log.FromContext(ctx).V(1).Info("created values object", "kind", kind)
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			metricWriteErrors.WithLabelValues(kind).Inc()
			return fmt.Errorf("create %s %s: %w", kind, key, err)
		}
		// It exists without our label, so the cache does not hold it.
		if err := reader.Get(ctx, key, have); err != nil {
			return fmt.Errorf("get %s %s: %w", kind, key, err)
		}
	} else if err != nil {
		return fmt.Errorf("get %s %s: %w", kind, key, err)
	}
	if upToDate(have, want) {
		return nil
	}
	updated := have.DeepCopyObject().(T)
	apply(updated, want)
	mergeOwned(updated, want)
	if err := c.Update(ctx, updated); err != nil {
		if !apierrors.IsConflict(err) {
			metricWriteErrors.WithLabelValues(kind).Inc()
		}
		return fmt.Errorf("update %s %s: %w", kind, key, err)
	}
	metricWrites.WithLabelValues(kind, "update").Inc()
	log.FromContext(ctx).V(1).Info("updated values object", "kind", kind)
	return nil
}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *corev1.Secret:
		return "Secret"
	}
	return fmt.Sprintf("%T", obj)
}
