package tenantrbac

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// bound to that catalog's role; the Tenant chart's ClusterRoleBinding is
// owned by the namespace, so it goes with it.
func TestObjects(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-acme", UID: "uid-1"}}
	var got []string
	installers := map[string]string{"services": "cozy:catalog:services:installer"}
	for _, o := range Objects(ns, []string{"tenant-acme", "tenant-root"}, installers) {
		got = append(got, o.GetObjectKind().GroupVersionKind().Kind+" "+o.GetNamespace()+"/"+o.GetName())
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			if o.AutomountServiceAccountToken == nil || *o.AutomountServiceAccountToken {
				t.Errorf("ServiceAccount %s mounts its token", o.Name)
			}
		case *rbacv1.RoleBinding:
			if o.Name == "cozy-installer-services" && (o.RoleRef.Name != "cozy:catalog:services:installer" || o.Subjects[0].Name != o.Name) {
				t.Errorf("RoleBinding %s: %+v %+v, want the catalog's role for its installer", o.Name, o.RoleRef, o.Subjects)
			}
			if o.Name == "cozy-installer" && o.RoleRef.Name != HelmStorageRoleName {
				t.Errorf("RoleBinding cozy-installer binds %s, want only Helm's storage", o.RoleRef.Name)
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
		"ServiceAccount tenant-acme/cozy-installer-services", "RoleBinding tenant-acme/cozy-installer-services",
		"ClusterRoleBinding /cozy:tenant-installer:tenant-acme",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}
