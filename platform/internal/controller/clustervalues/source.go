package clustervalues

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// getSource reads the ClusterValues singleton. It returns (nil, nil) when
// it does not exist.
func getSource(ctx context.Context, c client.Reader) (*v1alpha1.ClusterValues, error) {
	cv := &v1alpha1.ClusterValues{}
	if err := c.Get(ctx, client.ObjectKey{Name: v1alpha1.ClusterValuesName}, cv); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return cv, nil
}

// isTenant reports whether ns is a live tenant namespace.
func isTenant(ns *corev1.Namespace) bool {
	_, ok := ns.Labels[v1alpha1.LabelTenant]
	return ok && ns.DeletionTimestamp == nil
}

// tenantSelector selects tenant namespaces.
func tenantSelector() client.ListOption {
	return client.HasLabels{v1alpha1.LabelTenant}
}

// listTenants lists the live tenant namespaces. The objects are the
// cache's own: callers must not modify them.
func listTenants(ctx context.Context, c client.Reader) ([]corev1.Namespace, error) {
	var list corev1.NamespaceList
	if err := c.List(ctx, &list, tenantSelector(), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := list.Items[:0]
	for _, ns := range list.Items {
		if ns.DeletionTimestamp == nil {
			out = append(out, ns)
		}
	}
	return out, nil
}

// ownedSelector selects the objects cozystack-controller writes.
func ownedSelector() client.ListOption {
	return client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController}
}
