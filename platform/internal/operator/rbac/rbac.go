package rbac

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
)

// HelmStorageRule is what Helm needs, beyond the chart's own objects, to
// keep a release's records: its storage driver (helm.sh/helm/v3
// pkg/storage/driver.Secrets, helm-controller's default) gets, lists by
// label, creates, updates and deletes Secrets named sh.helm.release.v1.*.
// Kubernetes cannot narrow list or create by name, so the rule is granted
// only where the records are kept apart from everything else: a Package's
// release storage namespace (names.StorageNamespace), and for application
// releases the tenant namespace, whose Secrets the tenant's own charts
// make.
func HelmStorageRule() rbacv1.PolicyRule {
	return rbacv1.PolicyRule{
		APIGroups: []string{""},
		Resources: []string{"secrets"},
		Verbs:     []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	}
}

// Identity is the objects that make up one component's identity. The
// cluster-scoped pair is nil unless the component is privileged and
// declares clusterRules.
type Identity struct {
	ServiceAccount *corev1.ServiceAccount
	// Role and RoleBinding grant the component's rules in its namespace.
	Role        *rbacv1.Role
	RoleBinding *rbacv1.RoleBinding
	// StorageRole and StorageRoleBinding grant HelmStorageRule in the
	// Package's release storage namespace (names.StorageNamespace), where
	// the HelmRelease keeps its records (spec.storageNamespace).
	StorageRole        *rbacv1.Role
	StorageRoleBinding *rbacv1.RoleBinding
	ClusterRole        *rbacv1.ClusterRole
	ClusterRoleBinding *rbacv1.ClusterRoleBinding
}

// For returns the identity of component comp of Package pkg, to be created
// in comp.Namespace. The namespaced objects are named
// names.Installer(pkg, comp.Name), the cluster-scoped ones
// names.ClusterRBAC(pkg, comp.Name); every object carries meta's labels and
// annotations (the owner marks the guard checks). Whether a privileged
// component may be installed at all is the caller's decision
// (PackageSpec.AllowPrivileged); For only reflects what is declared.
func For(pkg string, comp v1alpha1.PackageComponent, meta metav1.ObjectMeta) Identity {
	name := names.Installer(pkg, comp.Name)
	nsMeta := func() metav1.ObjectMeta {
		m := *meta.DeepCopy()
		m.Name, m.Namespace = name, comp.Namespace
		return m
	}
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: comp.Namespace}
	storageMeta := nsMeta()
	storageMeta.Namespace = names.StorageNamespace(pkg)
	id := Identity{
		ServiceAccount: &corev1.ServiceAccount{ObjectMeta: nsMeta()},
		Role:           &rbacv1.Role{ObjectMeta: nsMeta(), Rules: deepCopyRules(comp.Rules)},
		RoleBinding: &rbacv1.RoleBinding{
			ObjectMeta: nsMeta(),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{subject},
		},
		StorageRole: &rbacv1.Role{ObjectMeta: storageMeta, Rules: []rbacv1.PolicyRule{HelmStorageRule()}},
		StorageRoleBinding: &rbacv1.RoleBinding{
			ObjectMeta: *storageMeta.DeepCopy(),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{subject},
		},
	}
	if comp.Privileged && len(comp.ClusterRules) > 0 {
		clusterName := names.ClusterRBAC(pkg, comp.Name)
		cm := *meta.DeepCopy()
		cm.Name, cm.Namespace = clusterName, ""
		id.ClusterRole = &rbacv1.ClusterRole{ObjectMeta: cm, Rules: deepCopyRules(comp.ClusterRules)}
		id.ClusterRoleBinding = &rbacv1.ClusterRoleBinding{
			ObjectMeta: *cm.DeepCopy(),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterName},
			Subjects:   []rbacv1.Subject{subject},
		}
	}
	return id
}

func deepCopyRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(rules))
	for i := range rules {
		rules[i].DeepCopyInto(&out[i])
	}
	return out
}
