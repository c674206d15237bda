package apiserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/localcp"
)

var postgreses = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "postgreses"}

func ensureNamespace(t testing.TB, name string) {
	t.Helper()
	_, err := env.Clientset.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// userClient is a dynamic client authenticating as user (a client
// certificate from the control plane's CA), with no groups.
func userClient(t *testing.T, user string) dynamic.Interface {
	t.Helper()
	pki := env.PKI()
	if err := pki.IssueClient(localcp.ClientIdentity{User: user}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.TLSClientConfig.CertFile = pki.ClientCert(user)
	cfg.TLSClientConfig.KeyFile = pki.ClientKey(user)
	return dynamic.NewForConfigOrDie(cfg)
}

// Authorization is kube-apiserver's RBAC: a user bound in namespace A can
// neither read nor list applications in namespace B.
func TestRBACIsolatesNamespaces(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	applyFixtureAD(t, "postgres")
	waitDiscovered(t, "postgreses", 5*time.Second)
	for _, pair := range [][2]string{{"alice", "rbac-a"}, {"bob", "rbac-b"}} {
		user, ns := pair[0], pair[1]
		ensureNamespace(t, ns)
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"apps.cozystack.io"}, Resources: []string{"*"}, Verbs: []string{"*"},
		}}}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "apps-" + user, Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "apps"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: user, APIGroup: "rbac.authorization.k8s.io"}}}
		for _, obj := range []client.Object{role, binding} {
			if err := backend.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
	}
	alice, bob := userClient(t, "alice"), userClient(t, "bob")
	pg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "metadata": map[string]any{"name": "mine"}, "spec": map[string]any{},
	}}
	// RBAC bindings take effect at once, but be patient with the authorizer cache.
	var err error
	for i := 0; i < 50; i++ {
		if _, err = alice.Resource(postgreses).Namespace("rbac-a").Create(ctx, pg, metav1.CreateOptions{}); err == nil || apierrors.IsAlreadyExists(err) {
			err = nil
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("alice creating in her own namespace: %v", err)
	}
	if _, err := alice.Resource(postgreses).Namespace("rbac-a").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("alice listing her own namespace: %v", err)
	}
	if _, err := bob.Resource(postgreses).Namespace("rbac-a").Get(ctx, "mine", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bob reading alice's application: %v, want 403 Forbidden", err)
	}
	if _, err := bob.Resource(postgreses).Namespace("rbac-a").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("bob listing alice's namespace: %v, want 403 Forbidden", err)
	}
	if _, err := alice.Resource(postgreses).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("alice listing all namespaces: %v, want 403 Forbidden", err)
	}
}

// Owner references are judged with the requester's rights through
// kube-apiserver's RBAC, not with cozystack-api's (K1, Metadata the
// platform owns): carol, who may manage applications and read ConfigMaps
// in her namespace, may name a ConfigMap as owner but not a Secret, nor
// block a ConfigMap's deletion.
func TestOwnerReferencesCheckedWithRequestersRights(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	applyFixtureAD(t, "postgres")
	waitDiscovered(t, "postgreses", 5*time.Second)
	const ns = "owners"
	ensureNamespace(t, ns)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps.cozystack.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "apps-carol", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "apps"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "carol", APIGroup: "rbac.authorization.k8s.io"}}}
	for _, obj := range []client.Object{role, binding} {
		if err := backend.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	carol := userClient(t, "carol").Resource(postgreses).Namespace(ns)
	block := true
	owned := func(name, kind string, blockDeletion bool) *unstructured.Unstructured {
		ref := metav1.OwnerReference{APIVersion: "v1", Kind: kind, Name: "owner", UID: "0a1b2c3d-0000-0000-0000-000000000002"}
		if blockDeletion {
			ref.BlockOwnerDeletion = &block
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "metadata": map[string]any{"name": name}, "spec": map[string]any{},
		}}
		u.SetOwnerReferences([]metav1.OwnerReference{ref})
		return u
	}
	var err error
	for i := 0; i < 50; i++ { // the authorizer's cache
		if _, err = carol.Create(ctx, owned("by-configmap", "ConfigMap", false), metav1.CreateOptions{}); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("owner carol may read: %v", err)
	}
	for name, tc := range map[string]struct {
		kind  string
		block bool
		says  string
	}{
		"by-secret":   {"Secret", false, "carol may not get it"},
		"by-blocking": {"ConfigMap", true, "carol may not update its finalizers"},
	} {
		_, err := carol.Create(ctx, owned(name, tc.kind, tc.block), metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err = %v, want 422 saying %q", name, err, tc.says)
		}
	}
}

// --dry-run=server validates and answers, and creates no HelmRelease.
func TestServerDryRunCreatesNothing(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	applyFixtureAD(t, "postgres")
	waitDiscovered(t, "postgreses", 5*time.Second)
	ensureNamespace(t, "dry-run")
	out, err := kubectl(t, "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata: {name: dry, namespace: dry-run}\nspec: {replicas: 2}\n",
		"apply", "--dry-run=server", "-f", "-")
	if err != nil || !strings.Contains(out, "(server dry run)") {
		t.Fatalf("kubectl apply --dry-run=server: %v", err)
	}
	var hr helmv2.HelmRelease
	if err := backend.Get(ctx, client.ObjectKey{Namespace: "dry-run", Name: "postgres-dry"}, &hr); !apierrors.IsNotFound(err) {
		t.Errorf("HelmRelease after a server dry run: %v, want NotFound", err)
	}
	// Invalid input still fails in a dry run, with the field path.
	out, err = kubectl(t, "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata: {name: dry, namespace: dry-run}\nspec: {replicas: many}\n",
		"apply", "--dry-run=server", "-f", "-")
	if err == nil || !strings.Contains(out, "spec.replicas") {
		t.Errorf("invalid dry run: err=%v; want a 422 naming spec.replicas", err)
	}
}
