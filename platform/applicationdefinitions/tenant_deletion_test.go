package applicationdefinitions_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// The lifecycle of tenant namespaces (contract K2, k2-cluster-values.md,
// "Tenant namespaces"; K5, k5-cozy-lib.md, "Tenant roles"), with the real
// helm-controller uninstalling as the impersonated installers and the real
// kube-controller-manager's namespace and garbage-collector controllers.

// tenantTree creates the Tenants of chain below tenant-root, each in the
// namespace of the one before, with a Stall in each namespace (installed
// by the catalog's installer), and returns their namespaces, top first.
func tenantTree(t *testing.T, ctx context.Context, c client.Client, dyn dynamic.Interface, chain ...string) []string {
	t.Helper()
	create := createTenant(ctx, dyn)
	parent := "tenant-root"
	var out []string
	for _, name := range chain {
		if err := create(parent, name, map[string]any{}); err != nil {
			t.Fatalf("Tenant %s/%s: %v", parent, name, err)
		}
		ns := "tenant-" + name
		if parent != "tenant-root" {
			ns = parent + "-" + name
		}
		waitBound(t, ctx, c, ns)
		createApp(t, ctx, dyn, stalls, ns, "s")
		out = append(out, ns)
		parent = ns
	}
	for _, ns := range out {
		eventually(t, ctx, "Stall "+ns+"/s installed", func() error {
			return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "board"}, &corev1.ConfigMap{})
		})
	}
	return out
}

// reviewGroup asks kube-apiserver whether a member of group may verb
// resource (core group) in namespace ns.
func reviewGroup(t *testing.T, ctx context.Context, c client.Client, group, verb, resource, ns string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "member-of-" + group, Groups: []string{group, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Resource: resource},
	}}
	if err := c.Create(ctx, sar); err != nil {
		t.Fatal(err)
	}
	return sar.Status.Allowed
}

// boundGroups returns, by namespace, the groups the tenant RoleBindings of
// namespaces bind.
func boundGroups(ctx context.Context, c client.Client, namespaces ...string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, ns := range namespaces {
		var rbs rbacv1.RoleBindingList
		if err := c.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for _, rb := range rbs.Items {
			for _, s := range rb.Subjects {
				if s.Kind == rbacv1.GroupKind && !slices.Contains(out[ns], s.Name) {
					out[ns] = append(out[ns], s.Name)
				}
			}
		}
	}
	return out, nil
}

// TestDeletingATenantTreeLeavesNothing: deleting the top Tenant of
// doomed → a → b → c (a Stall in each) leaves no namespace, RoleBinding,
// ClusterRoleBinding or HelmRelease of the tree: the installers outlive
// the releases that install as them (the attack: the namespace controller
// deleted cozy-tenant-installer first, helm-controller skipped the child
// Tenants' uninstallation, and their namespaces stayed). A child's admin
// may not hold the tree with a finalizer of its own on an application. A
// Tenant created afterwards under the same name sees nothing of the old
// one: its groups are bound in no old namespace and are denied there.
func TestDeletingATenantTreeLeavesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	tree := tenantTree(t, ctx, c, dyn, "doomed", "a", "b", "c")

	// The admin of a (and so of b) tries to hold b's namespace with a
	// finalizer of its own on the Stall there.
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "admin-of-a", Groups: []string{v1alpha1.TenantGroup(tree[1], v1alpha1.TenantLevelAdmin), "system:authenticated"}}
	asAdmin := dynamic.NewForConfigOrDie(cfg)
	patch := []byte(`{"metadata":{"finalizers":["example.com/hold"]}}`)
	_, err := asAdmin.Resource(stalls).Namespace(tree[2]).Patch(ctx, "s", types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.finalizers[0]") {
		t.Errorf("a tenant's own finalizer on an application: err = %v, want 422 on metadata.finalizers[0]", err)
	}

	if err := dyn.Resource(tenants).Namespace("tenant-root").Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the tree "+strings.Join(tree, ", ")+" gone", func() error {
		var left []string
		for _, ns := range tree {
			n := &corev1.Namespace{}
			if err := c.Get(ctx, client.ObjectKey{Name: ns}, n); err == nil {
				left = append(left, fmt.Sprintf("namespace %s (%s)", ns, n.Status.Phase))
			} else if !apierrors.IsNotFound(err) {
				return err
			}
			var rbs rbacv1.RoleBindingList
			if err := c.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, rb := range rbs.Items {
				left = append(left, "RoleBinding "+ns+"/"+rb.Name)
			}
			var hrs helmv2.HelmReleaseList
			if err := c.List(ctx, &hrs, client.InNamespace(ns)); err != nil {
				return err
			}
			for _, hr := range hrs.Items {
				left = append(left, "HelmRelease "+ns+"/"+hr.Name)
			}
			crb := "cozy:tenant-installer:" + ns
			if err := c.Get(ctx, client.ObjectKey{Name: crb}, &rbacv1.ClusterRoleBinding{}); err == nil {
				left = append(left, "ClusterRoleBinding "+crb)
			} else if !apierrors.IsNotFound(err) {
				return err
			}
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant-root", Name: "tenant-doomed"}, &helmv2.HelmRelease{}); err == nil {
			left = append(left, "HelmRelease tenant-root/tenant-doomed")
		}
		if len(left) > 0 {
			return fmt.Errorf("still there: %s", strings.Join(left, "; "))
		}
		return nil
	})

	// A new Tenant of the same name: bound in its new namespace only.
	if err := createTenant(ctx, dyn)("tenant-root", "doomed", map[string]any{}); err != nil {
		t.Fatalf("re-creating Tenant doomed after its tree is gone: %v", err)
	}
	waitBound(t, ctx, c, tree[0])
	var all rbacv1.RoleBindingList
	if err := c.List(ctx, &all); err != nil {
		t.Fatal(err)
	}
	for _, rb := range all.Items {
		for _, s := range rb.Subjects {
			if strings.HasPrefix(s.Name, tree[0]+"-") && rb.Namespace != tree[0] && slices.Contains(v1alpha1.TenantLevels, strings.TrimPrefix(s.Name, tree[0]+"-")) {
				t.Errorf("RoleBinding %s/%s binds group %s of the new Tenant doomed", rb.Namespace, rb.Name, s.Name)
			}
		}
	}
	for _, level := range v1alpha1.TenantLevels {
		group := v1alpha1.TenantGroup(tree[0], level)
		for _, ns := range tree[1:] {
			if reviewGroup(t, ctx, c, group, "list", "secrets", ns) || reviewGroup(t, ctx, c, group, "list", "pods", ns) {
				t.Errorf("group %s of the new Tenant doomed may act in the old namespace %s", group, ns)
			}
		}
	}
	if !reviewGroup(t, ctx, c, v1alpha1.TenantGroup(tree[0], v1alpha1.TenantLevelView), "list", "pods", tree[0]) {
		t.Errorf("the new Tenant doomed's view group may not list pods in its own namespace")
	}
}

// TestTenantReCreatedWhileDeletingIsRefused: while a deleted Tenant's
// namespace is terminating (held here by a ConfigMap's finalizer, as any
// slow deletion would; helm-controller's uninstall waits for it), a Tenant
// of the same name is refused, saying what is still there and that it must
// finish deleting; once the namespace is gone the name is free again. A
// Tenant whose namespace is terminating under it is not Ready over it.
func TestTenantReCreatedWhileDeletingIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	hold := func(ns string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hold", Namespace: ns, Finalizers: []string{"example.com/hold"}}}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		return cm
	}
	release := func(cm *corev1.ConfigMap) {
		orig := cm.DeepCopy()
		cm.Finalizers = nil
		if err := c.Patch(ctx, cm, client.MergeFrom(orig)); err != nil {
			t.Fatal(err)
		}
	}
	terminating := func(ns string) {
		eventually(t, ctx, "namespace "+ns+" terminating", func() error {
			n := &corev1.Namespace{}
			if err := c.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
				return err
			}
			if n.DeletionTimestamp == nil {
				return fmt.Errorf("not terminating")
			}
			return nil
		})
	}

	// A Tenant whose namespace is deleted under it, and held.
	ember := tenantTree(t, ctx, c, dyn, "ember")[0]
	emberHold := hold(ember)
	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ember}}); err != nil {
		t.Fatal(err)
	}
	terminating(ember)
	eventually(t, ctx, "Tenant ember Ready=False, its namespace still deleting", func() error {
		ready, msg, err := readyOf(ctx, dyn, tenants, "tenant-root", "ember")
		if err != nil {
			return err
		}
		if !strings.HasPrefix(ready, "False/") || !strings.Contains(msg, "namespace "+ember+" is still deleting") || !strings.Contains(msg, "example.com/hold") {
			return fmt.Errorf("Ready %s: %s", ready, msg)
		}
		return nil
	})

	// A deleted Tenant whose namespace is held: its name is not free.
	phoenix := tenantTree(t, ctx, c, dyn, "phoenix")[0]
	phoenixHold := hold(phoenix)
	if err := dyn.Resource(tenants).Namespace("tenant-root").Delete(ctx, "phoenix", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	terminating(phoenix)
	eventually(t, ctx, "re-creating Tenant phoenix refused while "+phoenix+" terminates", func() error {
		err := createTenant(ctx, dyn)("tenant-root", "phoenix", map[string]any{})
		if err == nil {
			t.Fatalf("Tenant phoenix re-created while its namespace %s terminates", phoenix)
		}
		for _, want := range []string{"Tenant tenant-root/phoenix is still being deleted", "namespace " + phoenix + " is deleting since", "example.com/hold",
			"a Tenant's name is reused only after its namespace and its subtree are gone (contract K2, Tenant namespaces)"} {
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
				return fmt.Errorf("err = %v, want 422 saying %q", err, want)
			}
		}
		return nil
	})
	release(phoenixHold)
	eventually(t, ctx, "Tenant phoenix re-created once "+phoenix+" is gone", func() error {
		return createTenant(ctx, dyn)("tenant-root", "phoenix", map[string]any{})
	})
	waitBound(t, ctx, c, phoenix)

	if err := dyn.Resource(tenants).Namespace("tenant-root").Delete(ctx, "ember", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	release(emberHold)
}

// TestParentLabelAloneMakesNoAncestor: a namespace labelled as a child of
// tenant-lab (namespace.cozystack.io/parent=tenant-lab) that no Tenant of
// tenant-lab renders is bound for its own groups only, never for
// tenant-lab's or tenant-root's; a child the Tenant chart made records its
// parent by UID and is bound for them; a namespace recording a parent UID
// that is not the live parent's is not its descendant, and garbage
// collection takes it.
func TestParentLabelAloneMakesNoAncestor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	tree := tenantTree(t, ctx, c, dyn, "lab", "real")
	lab := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: tree[0]}, lab); err != nil {
		t.Fatal(err)
	}
	forged := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-lab-forged", Labels: map[string]string{
		v1alpha1.LabelTenant: "forged", v1alpha1.LabelParent: tree[0]}}}
	if err := c.Create(ctx, forged); err != nil {
		t.Fatal(err)
	}
	stale := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-lab-stale", Labels: map[string]string{
		v1alpha1.LabelTenant: "stale", v1alpha1.LabelParent: tree[0]},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: tree[0], UID: "00000000-0000-0000-0000-000000000001"}}}}
	if err := c.Create(ctx, stale); err != nil {
		t.Fatal(err)
	}
	waitBound(t, ctx, c, forged.Name)

	real := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: tree[1]}, real); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(real.OwnerReferences, func(r metav1.OwnerReference) bool {
		return r.Kind == "Namespace" && r.Name == lab.Name && r.UID == lab.UID
	}) {
		t.Errorf("namespace %s made by Tenant lab/real: owners %+v, want namespace %s (uid %s)", real.Name, real.OwnerReferences, lab.Name, lab.UID)
	}
	got, err := boundGroups(ctx, c, forged.Name, tree[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got[forged.Name] {
		if !strings.HasPrefix(g, forged.Name+"-") {
			t.Errorf("namespace %s, claiming parent %s by label only, binds group %s", forged.Name, tree[0], g)
		}
	}
	if !slices.Contains(got[tree[1]], v1alpha1.TenantGroup(tree[0], v1alpha1.TenantLevelAdmin)) {
		t.Errorf("namespace %s, a real child of %s, binds %v, want %s among them", tree[1], tree[0], got[tree[1]], v1alpha1.TenantGroup(tree[0], v1alpha1.TenantLevelAdmin))
	}
	for _, group := range []string{v1alpha1.TenantGroup(tree[0], v1alpha1.TenantLevelUse), v1alpha1.TenantGroup("tenant-root", v1alpha1.TenantLevelSuperAdmin)} {
		if reviewGroup(t, ctx, c, group, "list", "secrets", forged.Name) {
			t.Errorf("group %s may list Secrets in %s, which only claims %s as parent by label", group, forged.Name, tree[0])
		}
	}
	eventually(t, ctx, "namespace "+stale.Name+", owned by a parent UID that is not the live one, collected", func() error {
		n := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(stale), n); apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		if groups, err := boundGroups(ctx, c, stale.Name); err == nil {
			for _, g := range groups[stale.Name] {
				if !strings.HasPrefix(g, stale.Name+"-") {
					t.Fatalf("namespace %s, recording a parent UID that is not %s's, binds group %s", stale.Name, tree[0], g)
				}
			}
		}
		return fmt.Errorf("still there (%s)", n.Status.Phase)
	})
	if err := c.Delete(ctx, forged); err != nil {
		t.Fatal(err)
	}
}

// TestParentAdminFinishesADyingChild: a finalizer on a child tenant's
// application from before tenants were refused one (set here on the
// HelmRelease directly) holds the child's namespace when the parent
// deletes the child Tenant; the parent's admin keeps its rights in the
// dying namespace (the tenant-role RoleBindings outlive its releases),
// removes the finalizer through the application, and the namespace goes.
func TestParentAdminFinishesADyingChild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	tree := tenantTree(t, ctx, c, dyn, "keeper", "kid")
	hr := &helmv2.HelmRelease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: tree[1], Name: "stall-s"}, hr); err != nil {
		t.Fatal(err)
	}
	orig := hr.DeepCopy()
	hr.Finalizers = append(hr.Finalizers, "example.com/old")
	if err := c.Patch(ctx, hr, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	if err := dyn.Resource(tenants).Namespace(tree[0]).Delete(ctx, "kid", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "Stall "+tree[1]+"/s held by its finalizer", func() error {
		now := &helmv2.HelmRelease{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(hr), now); err != nil {
			return err
		}
		if now.DeletionTimestamp == nil || len(now.Finalizers) != 1 {
			return fmt.Errorf("deletionTimestamp %v, finalizers %v", now.DeletionTimestamp, now.Finalizers)
		}
		return nil
	})
	// The namespace controller has been through all of the namespace's
	// content once (everything it could delete is deleted or held).
	eventually(t, ctx, "namespace "+tree[1]+" waiting on finalizers", func() error {
		n := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: tree[1]}, n); err != nil {
			return err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NamespaceFinalizersRemaining && cond.Status == corev1.ConditionTrue && strings.Contains(cond.Message, "example.com/old") {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", n.Status.Conditions)
	})
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "admin-of-keeper", Groups: []string{v1alpha1.TenantGroup(tree[0], v1alpha1.TenantLevelAdmin), "system:authenticated"}}
	parentAdmin := dynamic.NewForConfigOrDie(cfg)
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := parentAdmin.Resource(stalls).Namespace(tree[1]).Patch(ctx, "s", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("the parent's admin removing a finalizer in the dying child %s: %v", tree[1], err)
	}
	eventually(t, ctx, "namespace "+tree[1]+" gone", func() error {
		if err := c.Get(ctx, client.ObjectKey{Name: tree[1]}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	if err := dyn.Resource(tenants).Namespace("tenant-root").Delete(ctx, "keeper", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
