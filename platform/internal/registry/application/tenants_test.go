package application

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

func TestTenantNamespace(t *testing.T) {
	for parent, want := range map[string]string{"tenant-root": "tenant-x", "tenant-a": "tenant-a-x", "other": "other-x"} {
		if got := TenantNamespace(parent, "x"); got != want {
			t.Errorf("TenantNamespace(%s, x) = %s, want %s", parent, got, want)
		}
	}
}

// A Tenant whose namespace another Tenant already derives (its namespace
// not made yet) or that exists is refused, naming the holder; its own
// namespace is no obstacle.
func TestTenantNamespacesUnique(t *testing.T) {
	ad := postgresAD(`{"type":"object"}`)
	ad.Name = "tenant"
	ad.Spec.Application.Kind, ad.Spec.Application.Plural, ad.Spec.Application.Singular = TenantKind, "tenants", "tenant"
	ad.Spec.Release.Prefix = "tenant-"
	f := newFixture(t, compileKind(t, ad))
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	f.rest.strategy.ns = corelisters.NewNamespaceLister(indexer)
	child := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns + "-a"}}
	if err := f.c.Create(context.Background(), child); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.c.Delete(context.Background(), child) })
	f.create("a-b", `{spec: {}}`) // derives <ns>-a-b; no namespace yet

	inChild := genericapirequest.WithNamespace(context.Background(), child.Name)
	_, err := f.rest.Create(inChild, f.newApp("b", `{spec: {}}`), nil, &metav1.CreateOptions{})
	if got := causes(t, err); len(got) != 1 || got[0] != "metadata.name" || !strings.Contains(err.Error(), "namespace "+f.ns+"-a-b is already the namespace of Tenant "+f.ns+"/a-b") {
		t.Fatalf("causes %v err %v", got, err)
	}

	// An existing namespace of no tenant, one of another tenant, and the
	// leftovers of an earlier Tenant of the same name: its namespace
	// (active or terminating) or a namespace still naming it as parent. A
	// name is reused only after its subtree is gone.
	gone := metav1.Now()
	for name, ns := range map[string]*corev1.Namespace{
		f.ns + "-free":  {},
		f.ns + "-taken": {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.LabelTenant: "someone", labelParent: "elsewhere"}}},
		f.ns + "-mine":  {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.LabelTenant: "mine", labelParent: f.ns}}},
		f.ns + "-dying": {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.LabelTenant: "dying", labelParent: f.ns}, DeletionTimestamp: &gone},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating, Conditions: []corev1.NamespaceCondition{{
				Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionTrue, Message: "Some resources are remaining: helmreleases.helm.toolkit.fluxcd.io has 1 resource instances"}}}},
		f.ns + "-orphans-x": {ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.LabelTenant: "x", labelParent: f.ns + "-orphans"}}},
	} {
		ns.Name = name
		if err := indexer.Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"free":    "a namespace that belongs to no tenant",
		"taken":   "the namespace of Tenant elsewhere/someone",
		"mine":    "the namespace " + f.ns + "-mine of an earlier Tenant " + f.ns + "/mine still exists (active); a Tenant's name is reused only after its namespace and its subtree are gone (contract K2, Tenant namespaces)",
		"dying":   "still exists (deleting since " + gone.UTC().Format(time.RFC3339) + "; Some resources are remaining: helmreleases.helm.toolkit.fluxcd.io has 1 resource instances); a Tenant's name is reused only after",
		"orphans": "namespaces " + f.ns + "-orphans-x still name " + f.ns + "-orphans as their parent: the subtree of an earlier Tenant " + f.ns + "/orphans is still there",
	} {
		_, err := f.rest.Create(f.ctx, f.newApp(name, `{spec: {}}`), nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", name, err, want)
		}
	}

	// The Tenant itself exists with its namespace: the create is a plain
	// AlreadyExists.
	f.create("own", `{spec: {}}`)
	if err := indexer.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns + "-own", Labels: map[string]string{v1alpha1.LabelTenant: "own", labelParent: f.ns}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rest.Create(f.ctx, f.newApp("own", `{spec: {}}`), nil, &metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("create of an existing Tenant: err = %v, want AlreadyExists", err)
	}
}
