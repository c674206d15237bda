package application

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
// DisableTakeOwnership). The error names the namespace and the tenant
// that holds it. Other kinds pass.
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
	if s.ns != nil {
		if n, err := s.ns.Get(ns); err == nil {
			if n.Labels[v1alpha1.LabelTenant] == app.GetName() && n.Labels[labelParent] == app.GetNamespace() {
				// This Tenant's own namespace: the Tenant exists (the
				// create is AlreadyExists) or its namespace outlives it
				// for a while; nobody else's is at stake.
				return nil
			}
			holder := "a namespace that belongs to no tenant"
			if t := n.Labels[v1alpha1.LabelTenant]; t != "" {
				holder = fmt.Sprintf("the namespace of Tenant %s/%s", n.Labels[labelParent], t)
			}
			return refuse(holder)
		}
	}
	var tenants helmv2.HelmReleaseList
	if err := s.client.List(ctx, &tenants, client.MatchingLabels{v1alpha1.LabelApplicationKind: TenantKind}); err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("listing Tenants to keep namespaces unique: %w", err))}
	}
	for _, hr := range tenants.Items {
		name := hr.Labels[v1alpha1.LabelApplicationName]
		if name == "" || (hr.Namespace == app.GetNamespace() && name == app.GetName()) {
			continue
		}
		if TenantNamespace(hr.Namespace, name) == ns {
			return refuse(fmt.Sprintf("the namespace of Tenant %s/%s", hr.Namespace, name))
		}
	}
	return nil
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
// platform), or "". Ready then is False: the release is installed, but
// the tenant it stands for is gone with every application in it.
func (r *REST) tenantNamespaceMissing(hr *helmv2.HelmRelease) string {
	name, ok := r.kind.ApplicationName(hr.Name)
	if !ok || hr.DeletionTimestamp != nil {
		return ""
	}
	ns := TenantNamespace(hr.Namespace, name)
	if _, err := r.strategy.ns.Get(ns); err == nil || !apierrors.IsNotFound(err) {
		return ""
	}
	return fmt.Sprintf("the tenant's namespace %s does not exist: it was deleted outside the platform, with every application in it; helm-controller recreates it, empty, at the next reconcile of this Tenant (within %s, or at once after the annotation reconcile.fluxcd.io/requestedAt is set to a new value)", ns, ReleaseInterval)
}

// memoizable reports whether the kind's converted objects depend only on
// their HelmRelease, so lists may reuse a conversion per resourceVersion:
// a Tenant's status also depends on its namespace.
func (r *REST) memoizable() bool { return r.kind.Kind != TenantKind || r.strategy.ns == nil }
