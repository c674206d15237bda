package tenantrbac

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// prune deletes the catalog installers (ServiceAccount and RoleBinding)
// of namespace ns that want no longer holds: their catalog went. So goes
// such a catalog's release storage namespace of ns (pruneStorage).
func (r *reconciler) prune(ctx context.Context, ns string, want []client.Object) error {
	keep := map[string]bool{}
	for _, o := range want {
		keep[o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName()] = true
	}
	if err := r.deleteWritten(ctx, ns, client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController, labelCatalogInstaller: "true"}, keep); err != nil {
		return err
	}
	return r.pruneStorage(ctx, ns, keep)
}

// helmReleaseType is the Secret type of Helm's release records.
const helmReleaseType = "helm.sh/release.v1"

// pruneStorage deletes the release storage namespaces this package
// created for tenant namespace ns (v1alpha1.ApplicationReleaseStorageNamespace)
// that keep does not hold, their catalog being gone, unless one still
// holds a Helm release record: a release handed over to another catalog
// keeps its records where they are (K1, "Who serves a kind"), so its
// storage namespace stays until the tenant namespace goes.
func (r *reconciler) pruneStorage(ctx context.Context, ns string, keep map[string]bool) error {
	var list corev1.NamespaceList
	if err := r.client.List(ctx, &list, client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController, labelNamespace: ns}); err != nil {
		return err
	}
	for i := range list.Items {
		s := &list.Items[i]
		if keep["Namespace/"+s.Name] || !strings.HasPrefix(s.Name, v1alpha1.ReleaseStorageNamespacePrefix) ||
			s.Annotations[v1alpha1.AnnotationPackageSource] == "" || s.DeletionTimestamp != nil || !appliedHere(s) {
			continue
		}
		var records corev1.SecretList
		if err := r.reader.List(ctx, &records, client.InNamespace(s.Name), client.Limit(1),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("type", helmReleaseType)}); err != nil {
			return fmt.Errorf("list Helm's records in %s: %w", s.Name, err)
		}
		if len(records.Items) > 0 {
			continue
		}
		if err := r.client.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete release storage namespace %s of %s: %w", s.Name, ns, err)
		}
	}
	return nil
}

// unbind deletes what this package wrote for namespace ns: its
// RoleBindings, ServiceAccounts and the Tenant chart's ClusterRoleBinding.
func (r *reconciler) unbind(ctx context.Context, ns string) error {
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: TenantInstallerBindingName(ns)}}
	if err := r.client.Delete(ctx, crb); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %s of former tenant namespace %s: %w", crb.Name, ns, err)
	}
	return r.deleteWritten(ctx, ns, client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController}, nil)
}

// deleteWritten deletes the ServiceAccounts and RoleBindings of namespace
// ns that sel selects, but those keep names ("ServiceAccount/<name>",
// "RoleBinding/<name>"). Their FinalizerTenantReleases goes first: they
// are no longer wanted in a namespace that stays.
func (r *reconciler) deleteWritten(ctx context.Context, ns string, sel client.MatchingLabels, keep map[string]bool) error {
	objs, err := r.written(ctx, ns, sel)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if keep[o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName()] || !appliedHere(o) {
			continue
		}
		if err := r.dropFinalizer(ctx, o); err != nil {
			return err
		}
		if err := r.client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete %s in %s: %w", o.GetName(), ns, err)
		}
	}
	return nil
}

// appliedHere says whether this package wrote o: the API server's record
// of o's writers (metadata.managedFields) holds a server-side apply by
// v1alpha1.FieldManagerController. The labels select what to look at; they decide nothing, so
// an object someone else labelled alike is never deleted.
func appliedHere(o client.Object) bool {
	for _, f := range o.GetManagedFields() {
		if f.Manager == v1alpha1.FieldManagerController && f.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

// written lists the ServiceAccounts and RoleBindings of namespace ns that
// sel selects, each with its kind set.
func (r *reconciler) written(ctx context.Context, ns string, sel client.MatchingLabels) ([]client.Object, error) {
	var sas corev1.ServiceAccountList
	if err := r.client.List(ctx, &sas, client.InNamespace(ns), sel); err != nil {
		return nil, err
	}
	var rbs rbacv1.RoleBindingList
	if err := r.client.List(ctx, &rbs, client.InNamespace(ns), sel); err != nil {
		return nil, err
	}
	var out []client.Object
	for i := range sas.Items {
		sas.Items[i].SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceAccount"))
		out = append(out, &sas.Items[i])
	}
	for i := range rbs.Items {
		rbs.Items[i].SetGroupVersionKind(rbacv1.SchemeGroupVersion.WithKind("RoleBinding"))
		out = append(out, &rbs.Items[i])
	}
	return out, nil
}
