package tenantrbac

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// descendants returns the tenant namespaces below name, from the cache.
func (r *reconciler) descendants(ctx context.Context, name string) ([]string, error) {
	var list corev1.NamespaceList
	if err := r.client.List(ctx, &list, client.HasLabels{v1alpha1.LabelTenant}); err != nil {
		return nil, err
	}
	children := map[string][]string{}
	for _, ns := range list.Items {
		if p := ns.Labels[v1alpha1.LabelParent]; p != "" {
			children[p] = append(children[p], ns.Name)
		}
	}
	var out []string
	seen := map[string]bool{name: true}
	queue := []string{name}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out, nil
}

// Ancestors returns the tenant namespaces above ns, nearest first, by
// recorded parents (ParentOwner: the ownerReference a namespace's parent
// label is verified into), never by a label alone: each parent must exist
// with the recorded UID and be a tenant namespace; the walk stops at the
// first that is not (a parent re-created under the same name is not an
// ancestor of its namespace's former children), at a namespace with no
// recorded parent, or at tenant-root, which has no parent.
func Ancestors(ctx context.Context, c client.Reader, ns *corev1.Namespace) ([]string, error) {
	var out []string
	seen := map[string]bool{ns.Name: true}
	cur := ns
	for len(out) < maxDepth {
		parent := cur.Labels[v1alpha1.LabelParent]
		if parent == "" || seen[parent] {
			break
		}
		owner := ParentOwner(cur)
		if owner == nil {
			break
		}
		next := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: parent}, next); apierrors.IsNotFound(err) {
			break
		} else if err != nil {
			return nil, err
		}
		if next.UID != owner.UID {
			break
		}
		if _, ok := next.Labels[v1alpha1.LabelTenant]; !ok {
			break
		}
		out = append(out, parent)
		seen[parent] = true
		cur = next
	}
	return out, nil
}

// Subjects returns the groups holding level in a namespace whose tenant
// chain (the namespace, then its ancestors) is chain: for each namespace
// of the chain, the groups of level and every level above it.
func Subjects(level string, chain []string) []rbacv1.Subject {
	from := 0
	for i, l := range v1alpha1.TenantLevels {
		if l == level {
			from = i
		}
	}
	var out []rbacv1.Subject
	for _, ns := range chain {
		for _, l := range v1alpha1.TenantLevels[from:] {
			out = append(out, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: v1alpha1.TenantGroup(ns, l)})
		}
	}
	return out
}
