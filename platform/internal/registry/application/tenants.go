package application

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/appkinds"
)

// labelParent is the tenant chart's label naming a tenant namespace's
// parent namespace.
const labelParent = v1alpha1.LabelParent

// TenantKind is the platform's own kind whose applications own a
// namespace each (platform/applicationdefinitions/tenant.yaml).
const TenantKind = appkinds.TenantKind

// RootTenantNamespace is the namespace of the root tenant.
const RootTenantNamespace = "tenant-root"

// TenantNamespace is the namespace Tenant name in namespace parent owns
// (contract K2, k2-cluster-values.md, "Tenant namespaces"): "tenant-<name>"
// under the root tenant, "<parent>-<name>" deeper, as the tenant chart
// (platform/charts/tenant) renders it.
func TenantNamespace(parent, name string) string {
	if parent == RootTenantNamespace {
		return "tenant-" + name
	}
	return parent + "-" + name
}

// validateTenantNamespace refuses a new Tenant whose namespace already
// exists or another Tenant already derives: names may hold "-", so
// "tenant-a-b" is both Tenant "a-b" of the root and Tenant "b" of
// "tenant-a", and the second release would otherwise meet the first's
// namespace (its install then fails with Conflict, and never takes it:
// DisableTakeOwnership). A name is reused only after its subtree is gone:
// the namespace of an earlier Tenant of the same name (also while it is
// terminating), or any namespace still naming that namespace as its
// parent, refuses the new Tenant, naming what is still there, as does the
// Tenant's own HelmRelease while it is being deleted. Only the Tenant's own
// live HelmRelease passes (the create then is AlreadyExists).
// The error names the namespace and what holds it. Other kinds pass.
func (s *strategy) validateTenantNamespace(ctx context.Context, app *unstructured.Unstructured) field.ErrorList {
	if s.kind.Kind != TenantKind {
		return nil
	}
	ns := TenantNamespace(app.GetNamespace(), app.GetName())
	path := metadataPath.Child("name")
	refuse := func(holder string) field.ErrorList {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"the tenant's namespace %s is already %s; tenant namespaces are unique (contract K2, Tenant namespaces): choose another name", ns, holder))}
	}
	var tenants helmv2.HelmReleaseList
	if err := s.client.List(ctx, &tenants, client.MatchingLabels{v1alpha1.LabelApplicationKind: TenantKind}); err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("listing Tenants to keep namespaces unique: %w", err))}
	}
	for _, hr := range tenants.Items {
		name := hr.Labels[v1alpha1.LabelApplicationName]
		if name == "" {
			continue
		}
		if hr.Namespace == app.GetNamespace() && name == app.GetName() {
			if hr.DeletionTimestamp == nil || s.ns == nil {
				// The Tenant itself exists: the create is AlreadyExists.
				return nil
			}
			// Its release uninstalls (helm-controller waits for the
			// namespace to go): say so rather than AlreadyExists.
			state := "gone"
			if n, err := s.ns.Get(ns); err == nil {
				state = NamespaceHolds(n)
			}
			return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
				"Tenant %s/%s is still being deleted: its release is uninstalling and its namespace %s is %s; a Tenant's name is reused only after its namespace and its subtree are gone (contract K2, Tenant namespaces): wait until it has finished deleting, or choose another name",
				app.GetNamespace(), app.GetName(), ns, state))}
		}
		if TenantNamespace(hr.Namespace, name) == ns {
			return refuse(fmt.Sprintf("the namespace of Tenant %s/%s", hr.Namespace, name))
		}
	}
	if s.ns == nil {
		return nil
	}
	if n, err := s.ns.Get(ns); err == nil {
		if n.Labels[v1alpha1.LabelTenant] == app.GetName() && n.Labels[labelParent] == app.GetNamespace() {
			return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
				"the namespace %s of an earlier Tenant %s/%s still exists (%s); a Tenant's name is reused only after its namespace and its subtree are gone (contract K2, Tenant namespaces): wait until it has finished deleting, or choose another name",
				ns, app.GetNamespace(), app.GetName(), NamespaceHolds(n)))}
		}
		holder := "a namespace that belongs to no tenant"
		if t := n.Labels[v1alpha1.LabelTenant]; t != "" {
			holder = fmt.Sprintf("the namespace of Tenant %s/%s", n.Labels[labelParent], t)
		}
		if n.DeletionTimestamp != nil {
			holder += " (still deleting)"
		}
		return refuse(holder)
	}
	children, err := s.ns.List(labels.SelectorFromSet(labels.Set{labelParent: ns}))
	if err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("listing the namespaces below %s: %w", ns, err))}
	}
	if len(children) > 0 {
		names := make([]string, len(children))
		for i, c := range children {
			names[i] = c.Name
			if c.DeletionTimestamp != nil {
				names[i] += " (deleting)"
			}
		}
		slices.Sort(names)
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"namespaces %s still name %s as their parent: the subtree of an earlier Tenant %s/%s is still there; a Tenant's name is reused only after its namespace and its subtree are gone (contract K2, Tenant namespaces): wait until they have finished deleting, or choose another name",
			strings.Join(names, ", "), ns, app.GetNamespace(), app.GetName()))}
	}
	return nil
}

// NamespaceHolds says, for a message, the state of namespace n: "active",
// or "deleting since <time>" with what kube-controller-manager's namespace
// controller reports still holds it (its conditions
// NamespaceContentRemaining and NamespaceFinalizersRemaining, or
// NamespaceDeletion*Failure).
func NamespaceHolds(n *corev1.Namespace) string {
	if n.DeletionTimestamp == nil {
		return "active"
	}
	out := "deleting since " + n.DeletionTimestamp.UTC().Format(time.RFC3339)
	var held []string
	for _, c := range n.Status.Conditions {
		if c.Status == corev1.ConditionTrue && c.Message != "" {
			held = append(held, c.Message)
		}
	}
	if len(held) > 0 {
		out += "; " + strings.Join(held, "; ")
	}
	return out
}

// statusHooks are the storage's additions to an application's status:
// the application behind a conflicting release, and for a Tenant whether
// its namespace still exists.
func (r *REST) statusHooks() statusHooks {
	h := statusHooks{describe: r.describeRelease}
	if r.kind.Kind == TenantKind && r.strategy.ns != nil {
		h.missing = r.tenantNamespaceMissing
	}
	return h
}

// tenantNamespaceMissing says what is missing when the namespace of the
// Tenant whose HelmRelease is hr does not exist (deleted outside the
// platform) or is terminating (a Tenant of the same name was deleted and
// its subtree is still going), or "". Ready then is False: the release is
// installed, but the tenant it stands for is gone, or going, with every
// application in it.
func (r *REST) tenantNamespaceMissing(hr *helmv2.HelmRelease) string {
	name, ok := r.kind.ApplicationName(hr.Name)
	if !ok || hr.DeletionTimestamp != nil {
		return ""
	}
	ns := TenantNamespace(hr.Namespace, name)
	n, err := r.strategy.ns.Get(ns)
	if err == nil && n.DeletionTimestamp != nil {
		return fmt.Sprintf("the tenant's namespace %s is still deleting (%s): a Tenant of this name was deleted and its subtree is not gone yet; this Tenant is not ready over it (contract K2, Tenant namespaces)", ns, NamespaceHolds(n))
	}
	if err == nil || !apierrors.IsNotFound(err) {
		return ""
	}
	return fmt.Sprintf("the tenant's namespace %s does not exist: it was deleted outside the platform, with every application in it; helm-controller recreates it, empty, at the next reconcile of this Tenant (within %s, or at once after the annotation reconcile.fluxcd.io/requestedAt is set to a new value)", ns, ReleaseInterval)
}

// memoizable reports whether the kind's converted objects depend only on
// their HelmRelease, so lists may reuse a conversion per resourceVersion:
// a Tenant's status also depends on its namespace.
func (r *REST) memoizable() bool { return r.kind.Kind != TenantKind || r.strategy.ns == nil }
