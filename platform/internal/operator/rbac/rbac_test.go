package rbac

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
)

var cmRule = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create"}}
var crdRule = rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"create"}}

func TestForPlainComponent(t *testing.T) {
	comp := v1alpha1.PackageComponent{Name: "echo", Namespace: "cozy-echo", Rules: []rbacv1.PolicyRule{cmRule}}
	meta := metav1.ObjectMeta{Labels: map[string]string{"l": "v"}, Annotations: map[string]string{names.AnnotationPackage: "demo"}}
	id := For("demo", comp, meta)
	name := names.Installer("demo", "echo")

	if id.ClusterRole != nil || id.ClusterRoleBinding != nil {
		t.Fatal("a component that is not privileged got cluster-wide RBAC")
	}
	if id.ServiceAccount.Name != name || id.ServiceAccount.Namespace != "cozy-echo" {
		t.Errorf("ServiceAccount %s/%s, want cozy-echo/%s", id.ServiceAccount.Namespace, id.ServiceAccount.Name, name)
	}
	want := []rbacv1.PolicyRule{cmRule}
	if diff := cmp.Diff(want, id.Role.Rules); diff != "" {
		t.Errorf("Role rules: exactly the declared rules (-want +got):\n%s", diff)
	}
	// Helm's records: only in the Package's release storage namespace.
	storage := names.StorageNamespace("demo")
	if id.StorageRole.Namespace != storage || id.StorageRoleBinding.Namespace != storage {
		t.Errorf("storage Role in %s, binding in %s, want %s", id.StorageRole.Namespace, id.StorageRoleBinding.Namespace, storage)
	}
	if diff := cmp.Diff([]rbacv1.PolicyRule{HelmStorageRule()}, id.StorageRole.Rules); diff != "" {
		t.Errorf("storage Role rules (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "cozy-echo"}}, id.StorageRoleBinding.Subjects); diff != "" {
		t.Errorf("storage RoleBinding subjects (-want +got):\n%s", diff)
	}
	wantBinding := rbacv1.RoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "cozy-echo"}},
	}
	if diff := cmp.Diff(wantBinding.RoleRef, id.RoleBinding.RoleRef); diff != "" {
		t.Errorf("RoleBinding roleRef (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantBinding.Subjects, id.RoleBinding.Subjects); diff != "" {
		t.Errorf("RoleBinding subjects (-want +got):\n%s", diff)
	}
	for _, m := range []metav1.ObjectMeta{id.ServiceAccount.ObjectMeta, id.Role.ObjectMeta, id.RoleBinding.ObjectMeta} {
		if m.Labels["l"] != "v" || m.Annotations[names.AnnotationPackage] != "demo" {
			t.Errorf("%s lacks the owner's labels or annotations: %v %v", m.Name, m.Labels, m.Annotations)
		}
	}
	// The caller's rules must not alias the catalog's.
	id.Role.Rules[0].Verbs[0] = "mutated"
	if comp.Rules[0].Verbs[0] != "get" {
		t.Error("For aliases the component's rules")
	}
}

func TestForPrivilegedComponent(t *testing.T) {
	comp := v1alpha1.PackageComponent{Name: "op", Namespace: "cozy-op", Privileged: true,
		Rules: []rbacv1.PolicyRule{cmRule}, ClusterRules: []rbacv1.PolicyRule{crdRule}}
	id := For("demo", comp, metav1.ObjectMeta{})
	if id.ClusterRole == nil || id.ClusterRoleBinding == nil {
		t.Fatal("a privileged component with clusterRules got no ClusterRole")
	}
	cname := names.ClusterRBAC("demo", "op")
	if id.ClusterRole.Name != cname || id.ClusterRole.Namespace != "" {
		t.Errorf("ClusterRole %q/%q, want cluster-scoped %q", id.ClusterRole.Namespace, id.ClusterRole.Name, cname)
	}
	if diff := cmp.Diff([]rbacv1.PolicyRule{crdRule}, id.ClusterRole.Rules); diff != "" {
		t.Errorf("ClusterRole rules: exactly clusterRules (-want +got):\n%s", diff)
	}
	wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: names.Installer("demo", "op"), Namespace: "cozy-op"}}
	if diff := cmp.Diff(wantSubjects, id.ClusterRoleBinding.Subjects); diff != "" {
		t.Errorf("ClusterRoleBinding subjects (-want +got):\n%s", diff)
	}
	if id.ClusterRoleBinding.RoleRef.Kind != "ClusterRole" || id.ClusterRoleBinding.RoleRef.Name != cname {
		t.Errorf("ClusterRoleBinding roleRef %+v", id.ClusterRoleBinding.RoleRef)
	}
	if diff := cmp.Diff([]rbacv1.PolicyRule{cmRule}, id.Role.Rules); diff != "" {
		t.Errorf("Role rules (-want +got):\n%s", diff)
	}
}
