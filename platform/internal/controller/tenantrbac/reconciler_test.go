package tenantrbac

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// The subjects of a level are the groups of that level and above, of the
// namespace and of each ancestor, nearest first (contract K5, "Tenant
// roles").
func TestSubjects(t *testing.T) {
	chain := []string{"tenant-acme-dev", "tenant-acme", "tenant-root"}
	for _, tc := range []struct {
		level string
		chain []string
		want  []string
	}{
		{"super-admin", chain, []string{"tenant-acme-dev-super-admin", "tenant-acme-super-admin", "tenant-root-super-admin"}},
		{"admin", chain[1:], []string{"tenant-acme-admin", "tenant-acme-super-admin", "tenant-root-admin", "tenant-root-super-admin"}},
		{"view", chain[2:], []string{"tenant-root-view", "tenant-root-use", "tenant-root-admin", "tenant-root-super-admin"}},
	} {
		var got []string
		for _, s := range Subjects(tc.level, tc.chain) {
			if s.Kind != rbacv1.GroupKind || s.APIGroup != rbacv1.GroupName {
				t.Errorf("%s: subject %+v is not a group", tc.level, s)
			}
			got = append(got, s.Name)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Subjects(%s, %v) (-want +got):\n%s", tc.level, tc.chain, diff)
		}
	}
}

// A tenant namespace holds four tenant RoleBindings, the installer
// ServiceAccounts (no token mounted) and their bindings, one per catalog
// bound to that catalog's role, each held by FinalizerTenantReleases; the
// Tenant chart's ClusterRoleBinding is owned by the namespace, so it goes
// after it. Each catalog has its release storage namespace, owned by the
// namespace, where only its installer holds Helm's storage, and the
// installer of a catalog whose release (handed over) keeps its records
// there; a catalog with releases kept in the namespace (created before
// storage namespaces) keeps Helm's storage there too.
func TestObjects(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-acme", UID: "uid-1"}}
	var got []string
	installers := map[string]string{"services": "cozy:catalog:services:installer", "other": "cozy:catalog:other:installer"}
	storage := "cozy-releases-app-33446d6508"
	if s := v1alpha1.ApplicationReleaseStorageNamespace("tenant-acme", "services"); s != storage {
		t.Errorf("storage namespace of services in tenant-acme is %s, want %s", s, storage)
	}
	for _, o := range Objects(ns, []string{"tenant-acme", "tenant-root"}, installers, map[string][]string{"tenant-acme": {"other"}, storage: {"other"}}) {
		got = append(got, o.GetObjectKind().GroupVersionKind().Kind+" "+o.GetNamespace()+"/"+o.GetName())
		// What is written in the namespace outlives its releases; the
		// ClusterRoleBinding and the storage namespaces go after the
		// namespace (garbage collection), their RoleBindings with them.
		if hold := slices.Contains(o.GetFinalizers(), FinalizerTenantReleases); hold != (o.GetNamespace() == "tenant-acme") {
			t.Errorf("%s %s: finalizers %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), o.GetFinalizers())
		}
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			if o.AutomountServiceAccountToken == nil || *o.AutomountServiceAccountToken {
				t.Errorf("ServiceAccount %s mounts its token", o.Name)
			}
		case *rbacv1.RoleBinding:
			if o.Namespace != "tenant-acme" {
				// other's release handed over from services keeps its
				// records in services' storage namespace.
				want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: o.Name, Namespace: "tenant-acme"}}
				if o.Namespace == storage {
					want = append(want, rbacv1.Subject{Kind: "ServiceAccount", Name: "cozy-installer-other", Namespace: "tenant-acme"})
				}
				if o.RoleRef.Name != HelmStorageRoleName || !cmp.Equal(o.Subjects, want) {
					t.Errorf("RoleBinding %s/%s: %+v %+v, want Helm's storage for %+v", o.Namespace, o.Name, o.RoleRef, o.Subjects, want)
				}
				break
			}
			if o.Name == LegacyStorageBinding("other") && (o.RoleRef.Name != HelmStorageRoleName || o.Subjects[0].Name != "cozy-installer-other") {
				t.Errorf("RoleBinding %s: %+v %+v, want Helm's storage for the installer of other", o.Name, o.RoleRef, o.Subjects)
			}
			if o.Name == "cozy-installer-services" && (o.RoleRef.Name != "cozy:catalog:services:installer" || o.Subjects[0].Name != o.Name) {
				t.Errorf("RoleBinding %s: %+v %+v, want the catalog's role for its installer", o.Name, o.RoleRef, o.Subjects)
			}
			if o.Name == "cozy-installer" && o.RoleRef.Name != HelmStorageRoleName {
				t.Errorf("RoleBinding cozy-installer binds %s, want only Helm's storage", o.RoleRef.Name)
			}
		case *corev1.Namespace:
			if len(o.OwnerReferences) != 1 || o.OwnerReferences[0].UID != "uid-1" || o.OwnerReferences[0].Kind != "Namespace" {
				t.Errorf("Namespace %s: owners %+v, want the tenant namespace", o.Name, o.OwnerReferences)
			}
			if o.Annotations["cozystack.io/tenant-namespace"] != "tenant-acme" || o.Annotations[v1alpha1.AnnotationPackageSource] == "" {
				t.Errorf("Namespace %s: annotations %v", o.Name, o.Annotations)
			}
		case *rbacv1.ClusterRoleBinding:
			if len(o.OwnerReferences) != 1 || o.OwnerReferences[0].UID != "uid-1" || o.OwnerReferences[0].Kind != "Namespace" {
				t.Errorf("ClusterRoleBinding %s: owners %+v, want the namespace", o.Name, o.OwnerReferences)
			}
			if o.RoleRef.Name != TenantInstallerRoleName || o.Subjects[0].Name != "cozy-tenant-installer" || o.Subjects[0].Namespace != "tenant-acme" {
				t.Errorf("ClusterRoleBinding %s: %+v %+v", o.Name, o.RoleRef, o.Subjects)
			}
		}
	}
	want := []string{
		"RoleBinding tenant-acme/cozy:tenant:view", "RoleBinding tenant-acme/cozy:tenant:use",
		"RoleBinding tenant-acme/cozy:tenant:admin", "RoleBinding tenant-acme/cozy:tenant:super-admin",
		"ServiceAccount tenant-acme/cozy-installer", "ServiceAccount tenant-acme/cozy-tenant-installer",
		"RoleBinding tenant-acme/cozy-installer", "RoleBinding tenant-acme/cozy-tenant-installer",
		"ServiceAccount tenant-acme/cozy-installer-other", "RoleBinding tenant-acme/cozy-installer-other",
		"RoleBinding tenant-acme/cozy-installer-other-helm-storage",
		"Namespace /" + v1alpha1.ApplicationReleaseStorageNamespace("tenant-acme", "other"),
		"RoleBinding " + v1alpha1.ApplicationReleaseStorageNamespace("tenant-acme", "other") + "/cozy-installer-other",
		"ServiceAccount tenant-acme/cozy-installer-services", "RoleBinding tenant-acme/cozy-installer-services",
		"Namespace /" + storage, "RoleBinding " + storage + "/cozy-installer-services",
		"ClusterRoleBinding /cozy:tenant-installer:tenant-acme",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

// The recorded parent is the ownerReference to the Namespace the parent
// label names; any other owner, or none, records nothing.
func TestParentOwner(t *testing.T) {
	ref := func(kind, name string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "v1", Kind: kind, Name: name, UID: types.UID("uid-" + name)}
	}
	for _, tc := range []struct {
		parent string
		owners []metav1.OwnerReference
		want   string
	}{
		{"tenant-a", []metav1.OwnerReference{ref("Namespace", "tenant-a")}, "uid-tenant-a"},
		{"tenant-a", []metav1.OwnerReference{ref("ConfigMap", "tenant-a"), ref("Namespace", "tenant-b")}, ""},
		{"tenant-a", nil, ""},
		{"", []metav1.OwnerReference{ref("Namespace", "tenant-a")}, ""},
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-a-x", OwnerReferences: tc.owners}}
		if tc.parent != "" {
			ns.Labels = map[string]string{"namespace.cozystack.io/parent": tc.parent}
		}
		got := ""
		if o := ParentOwner(ns); o != nil {
			got = string(o.UID)
		}
		if got != tc.want {
			t.Errorf("ParentOwner(parent %q, owners %v) = %q, want %q", tc.parent, tc.owners, got, tc.want)
		}
	}
}
