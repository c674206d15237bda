package tenantrbac

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// The lifecycle of a tenant namespace (contract K2, k2-cluster-values.md,
// "Tenant namespaces"; K5, k5-cozy-lib.md, "Tenant roles").

// FinalizerTenantReleases holds every ServiceAccount and RoleBinding this
// package writes in a tenant namespace (the installers helm-controller
// impersonates, their RoleBindings, and the four tenant-role RoleBindings)
// until the namespace is terminating and holds no HelmRelease any more.
// The namespace controller deletes a namespace's contents in no particular
// order; without the finalizer the installers went before the releases
// that install as them, helm-controller skipped their uninstallation
// ("ServiceAccount not found") and the child tenants' namespaces stayed.
// helm-controller v1.4.0 only checks that the ServiceAccount it
// impersonates exists, so one that is being deleted still uninstalls; the
// tenant-role RoleBindings stay so that the parent tenant's users keep the
// rights to finish a dying child.
const FinalizerTenantReleases = "cozystack.io/tenant-releases"

// The annotations Helm writes on every object of a release.
const (
	annotationReleaseName      = "meta.helm.sh/release-name"
	annotationReleaseNamespace = "meta.helm.sh/release-namespace"
)

// ParentOwner returns the parent a tenant namespace recorded for it: its
// ownerReference to a v1 Namespace named by its parent label
// (v1alpha1.LabelParent), or nil when it has none.
func ParentOwner(ns *corev1.Namespace) *metav1.OwnerReference {
	parent := ns.Labels[v1alpha1.LabelParent]
	if parent == "" {
		return nil
	}
	for i, ref := range ns.OwnerReferences {
		if ref.APIVersion == "v1" && ref.Kind == "Namespace" && ref.Name == parent {
			return &ns.OwnerReferences[i]
		}
	}
	return nil
}

// childNamespace is the namespace Tenant name of namespace parent renders
// (platform/charts/tenant, _names.tpl; the registry's TenantNamespace):
// "tenant-<name>" under tenant-root, "<parent>-<name>" deeper.
func childNamespace(parent, name string) string {
	if parent == "tenant-root" {
		return "tenant-" + name
	}
	return parent + "-" + name
}

// verifyParent checks the parent that tenant namespace ns names by its
// label before it is recorded: it must be a live tenant namespace (present,
// not being deleted, labelled v1alpha1.LabelTenant), and a Tenant
// HelmRelease there (labelled apps.cozystack.io/application.kind=Tenant)
// must render ns: Helm's release annotations on ns name that release and
// namespace, and the Tenant's name derives ns. It reads from the API, not
// the cache, as what it records decides what garbage collection keeps. It
// returns the owner reference to record, or "" and why not.
func (r *reconciler) verifyParent(ctx context.Context, ns *corev1.Namespace) (*metav1.OwnerReference, string, error) {
	name := ns.Labels[v1alpha1.LabelParent]
	parent := &corev1.Namespace{}
	if err := r.reader.Get(ctx, client.ObjectKey{Name: name}, parent); apierrors.IsNotFound(err) {
		return nil, fmt.Sprintf("its parent namespace %s does not exist", name), nil
	} else if err != nil {
		return nil, "", err
	}
	if parent.DeletionTimestamp != nil {
		return nil, fmt.Sprintf("its parent namespace %s is being deleted", name), nil
	}
	if _, ok := parent.Labels[v1alpha1.LabelTenant]; !ok {
		return nil, fmt.Sprintf("its parent namespace %s is not a tenant namespace", name), nil
	}
	release := ns.Annotations[annotationReleaseName]
	if ns.Annotations[annotationReleaseNamespace] != name || release == "" {
		return nil, fmt.Sprintf("no Helm release of %s made it (annotations %s=%q, %s=%q)", name,
			annotationReleaseNamespace, ns.Annotations[annotationReleaseNamespace], annotationReleaseName, release), nil
	}
	var hrs helmv2.HelmReleaseList
	if err := r.reader.List(ctx, &hrs, client.InNamespace(name), client.MatchingLabels{v1alpha1.LabelApplicationKind: tenantKind}); err != nil {
		return nil, "", err
	}
	for _, hr := range hrs.Items {
		if hr.GetReleaseName() == release && childNamespace(name, hr.Labels[v1alpha1.LabelApplicationName]) == ns.Name {
			return &metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: parent.Name, UID: parent.UID}, "", nil
		}
	}
	return nil, fmt.Sprintf("no Tenant of %s renders it (Helm release %s is no Tenant release of that namespace deriving %s)", name, release, ns.Name), nil
}

// tenantKind is the platform's Tenant kind (platform/applicationdefinitions/tenant.yaml).
const tenantKind = "Tenant"

// recordParent verifies the parent ns names and, when it holds, records
// it as ns's ownerReference (so garbage collection also collects ns once
// that parent is gone: a backstop for a child its parent's uninstall
// missed). When it does not, ns keeps no parent: a Warning event says why.
func (r *reconciler) recordParent(ctx context.Context, ns *corev1.Namespace) error {
	ref, why, err := r.verifyParent(ctx, ns)
	if err != nil {
		return err
	}
	if ref == nil {
		if r.recorder != nil {
			r.recorder.Eventf(ns, nil, corev1.EventTypeWarning, ReasonParentNotVerified, "BindTenantRoles",
				"label %s=%s is not taken as this namespace's parent: %s; no group of that namespace is bound here (contract K2, Tenant namespaces)",
				v1alpha1.LabelParent, ns.Labels[v1alpha1.LabelParent], why)
		}
		return nil
	}
	orig := ns.DeepCopy()
	ns.OwnerReferences = append(ns.OwnerReferences, *ref)
	if err := r.client.Patch(ctx, ns, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("record parent %s of tenant namespace %s: %w", ref.Name, ns.Name, err)
	}
	return nil
}

// ReasonParentNotVerified is the reason of the Warning event on a tenant
// namespace whose parent label names no live parent that renders it.
const ReasonParentNotVerified = "ParentNotVerified"

// releaseFinalizers removes FinalizerTenantReleases from what this
// package wrote in terminating namespace ns, once ns holds no HelmRelease:
// the last release that could install as one of them is gone. It reports
// whether it did.
func (r *reconciler) releaseFinalizers(ctx context.Context, ns string) (bool, error) {
	// From the API: a release the cache has not seen yet still needs them.
	var hrs helmv2.HelmReleaseList
	if err := r.reader.List(ctx, &hrs, client.InNamespace(ns), client.Limit(1)); err != nil {
		return false, err
	}
	if len(hrs.Items) > 0 {
		return false, nil
	}
	objs, err := r.written(ctx, ns, client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController})
	if err != nil {
		return false, err
	}
	for _, o := range objs {
		if err := r.dropFinalizer(ctx, o); err != nil {
			return false, err
		}
	}
	return true, nil
}

// dropFinalizer removes FinalizerTenantReleases from o, if it holds it.
func (r *reconciler) dropFinalizer(ctx context.Context, o client.Object) error {
	if !controllerutil.ContainsFinalizer(o, FinalizerTenantReleases) {
		return nil
	}
	orig := o.DeepCopyObject().(client.Object)
	controllerutil.RemoveFinalizer(o, FinalizerTenantReleases)
	if err := r.client.Patch(ctx, o, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove finalizer %s from %s in %s: %w", FinalizerTenantReleases, o.GetName(), o.GetNamespace(), err)
	}
	return nil
}
