package tenantrbac

import (
	"context"
	"slices"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// installers returns the catalogs' installer roles: ClusterRole name by
// PackageSource name (v1alpha1.AnnotationPackageSource).
func (r *reconciler) installers(ctx context.Context) (map[string]string, error) {
	var roles rbacv1.ClusterRoleList
	if err := r.client.List(ctx, &roles, client.MatchingLabels{v1alpha1.InstallerRoleLabel: "true"}); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, role := range roles.Items {
		if src := role.Annotations[v1alpha1.AnnotationPackageSource]; src != "" && role.DeletionTimestamp == nil {
			out[src] = role.Name
		}
	}
	return out, nil
}

// storageGuests returns, by namespace holding Helm's records, the catalogs
// (PackageSource names, of installers) with a HelmRelease in tenant
// namespace ns that installs as the catalog's installer and keeps its
// records there, when that is not the catalog's own storage namespace:
// ns itself (no spec.storageNamespace: a release created before release
// storage namespaces, whose records are found only there), or another
// catalog's storage namespace in ns (a release handed over to this
// catalog, K1 "Who serves a kind", keeps where its records are).
func (r *reconciler) storageGuests(ctx context.Context, ns string, installers map[string]string) (map[string][]string, error) {
	var list helmv2.HelmReleaseList
	if err := r.client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	bySA := map[string]string{}
	for src := range installers {
		bySA[v1alpha1.CatalogInstallerServiceAccount(src)] = src
	}
	out := map[string][]string{}
	for _, hr := range list.Items {
		src, ok := bySA[hr.Spec.ServiceAccountName]
		if !ok {
			continue
		}
		at := hr.Spec.StorageNamespace
		if at == "" {
			at = ns
		}
		if at != v1alpha1.ApplicationReleaseStorageNamespace(ns, src) && !slices.Contains(out[at], src) {
			out[at] = append(out[at], src)
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out, nil
}
