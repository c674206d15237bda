package tenantrbac

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// labelCatalogInstaller marks the ServiceAccount and RoleBinding of one
// catalog's installer in a tenant namespace, which go when the catalog's
// installer role goes.
const labelCatalogInstaller = "cozystack.io/catalog-installer"

// Objects returns what tenant namespace ns, with tenant chain chain (ns,
// then its ancestors), holds when the catalogs' installer roles are
// installers (ClusterRole name by PackageSource name) and guests names, by
// namespace, the catalogs with releases whose Helm records are there but
// not in their own storage namespace (storageGuests):
// the four tenant RoleBindings; per catalog, its installer ServiceAccount
// (v1alpha1.CatalogInstallerServiceAccount) bound to its role, its release
// storage namespace (v1alpha1.ApplicationReleaseStorageNamespace, owned by
// ns so collected after it, i.e. after its releases) with a RoleBinding
// giving that installer, and those of its guests, Helm's storage there,
// and, for a guest of ns only, a RoleBinding (LegacyStorageBinding) giving
// it Helm's storage in ns too; the
// installer of applications of no catalog (v1alpha1.InstallerServiceAccount,
// Helm's storage only); and the Tenant chart's ServiceAccount, its
// RoleBinding and its ClusterRoleBinding.
func Objects(ns *corev1.Namespace, chain []string, installers map[string]string, guests map[string][]string) []client.Object {
	managed := map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController}
	// Each outlives the releases of the namespace (FinalizerTenantReleases).
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns.Name, Labels: managed, Finalizers: []string{FinalizerTenantReleases}}
	}
	rbTypes := metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"}
	clusterRole := func(name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
	}
	sa := func(name string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns.Name}
	}
	var out []client.Object
	for _, level := range v1alpha1.TenantLevels {
		name := v1alpha1.TenantRoleName(level)
		out = append(out, &rbacv1.RoleBinding{TypeMeta: rbTypes, ObjectMeta: meta(name), RoleRef: clusterRole(name), Subjects: Subjects(level, chain)})
	}
	for _, name := range []string{v1alpha1.InstallerServiceAccount, v1alpha1.TenantInstallerServiceAccount} {
		out = append(out, &corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta(name),
			// Only helm-controller acts as these, by impersonation.
			AutomountServiceAccountToken: ptr.To(false),
		})
	}
	out = append(out,
		&rbacv1.RoleBinding{TypeMeta: rbTypes, ObjectMeta: meta(v1alpha1.InstallerServiceAccount),
			RoleRef: clusterRole(HelmStorageRoleName), Subjects: []rbacv1.Subject{sa(v1alpha1.InstallerServiceAccount)}},
		&rbacv1.RoleBinding{TypeMeta: rbTypes, ObjectMeta: meta(v1alpha1.TenantInstallerServiceAccount),
			RoleRef: clusterRole(HelmStorageRoleName), Subjects: []rbacv1.Subject{sa(v1alpha1.TenantInstallerServiceAccount)}},
	)
	for _, source := range slices.Sorted(maps.Keys(installers)) {
		name := v1alpha1.CatalogInstallerServiceAccount(source)
		m := meta(name)
		m.Labels = map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController, labelCatalogInstaller: "true"}
		m.Annotations = map[string]string{v1alpha1.AnnotationPackageSource: source}
		out = append(out,
			&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: m,
				AutomountServiceAccountToken: ptr.To(false)},
			&rbacv1.RoleBinding{TypeMeta: rbTypes, ObjectMeta: *m.DeepCopy(),
				RoleRef: clusterRole(installers[source]), Subjects: []rbacv1.Subject{sa(name)}},
		)
		if slices.Contains(guests[ns.Name], source) {
			l := *m.DeepCopy()
			l.Name = LegacyStorageBinding(source)
			out = append(out, &rbacv1.RoleBinding{TypeMeta: rbTypes, ObjectMeta: l,
				RoleRef: clusterRole(HelmStorageRoleName), Subjects: []rbacv1.Subject{sa(name)}})
		}
		// No finalizer here: the storage namespace goes after ns (its
		// owner), and a finalizer no one removes would keep it.
		storage := v1alpha1.ApplicationReleaseStorageNamespace(ns.Name, source)
		subjects := []rbacv1.Subject{sa(name)}
		for _, g := range guests[storage] {
			subjects = append(subjects, sa(v1alpha1.CatalogInstallerServiceAccount(g)))
		}
		storageLabels := map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController, labelNamespace: ns.Name}
		storageAnnotations := map[string]string{v1alpha1.AnnotationPackageSource: source, annotationTenantNamespace: ns.Name}
		out = append(out,
			&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{
				Name: storage, Labels: storageLabels, Annotations: storageAnnotations,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns.Name, UID: ns.UID}},
			}},
			&rbacv1.RoleBinding{TypeMeta: rbTypes,
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: storage, Labels: storageLabels, Annotations: storageAnnotations},
				RoleRef:    clusterRole(HelmStorageRoleName), Subjects: subjects},
		)
	}
	crbLabels := map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByController, labelNamespace: ns.Name}
	out = append(out, &rbacv1.ClusterRoleBinding{
		TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{
			Name: TenantInstallerBindingName(ns.Name), Labels: crbLabels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns.Name, UID: ns.UID}},
		},
		RoleRef:  clusterRole(TenantInstallerRoleName),
		Subjects: []rbacv1.Subject{sa(v1alpha1.TenantInstallerServiceAccount)},
	})
	return out
}

// The cluster-wide roles of platform/tenantaccess/roles.yaml this package
// binds.
const (
	HelmStorageRoleName     = "cozy:tenant:installer:helm-storage"
	TenantInstallerRoleName = "cozy:tenant-installer"
)

// annotationTenantNamespace names, on a release storage namespace and its
// RoleBinding, the exact tenant namespace they were written for (the label
// labelNamespace selects; a label value could not hold every name).
const annotationTenantNamespace = "cozystack.io/tenant-namespace"

// LegacyStorageBinding is the RoleBinding, in a tenant namespace, giving
// the installer of catalog source Helm's storage there while a release of
// the catalog created before release storage namespaces keeps its records
// there: "<installer>-helm-storage", cut with a hash when too long.
func LegacyStorageBinding(source string) string {
	const suffix, limit = "-helm-storage", 253
	name := v1alpha1.CatalogInstallerServiceAccount(source)
	if len(name)+len(suffix) <= limit {
		return name + suffix
	}
	sum := sha256.Sum256([]byte(source))
	return name[:limit-len(suffix)-9] + "-" + hex.EncodeToString(sum[:4]) + suffix
}

// TenantInstallerBindingName is the ClusterRoleBinding of tenant
// namespace ns's cozy-tenant-installer: "cozy:tenant-installer:<ns>".
func TenantInstallerBindingName(ns string) string { return TenantInstallerRoleName + ":" + ns }
