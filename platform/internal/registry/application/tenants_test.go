package application

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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

	// An existing namespace of no tenant, and one of another tenant.
	for name, labels := range map[string]map[string]string{
		f.ns + "-free":  nil,
		f.ns + "-taken": {v1alpha1.LabelTenant: "someone", labelParent: "elsewhere"},
		f.ns + "-mine":  {v1alpha1.LabelTenant: "mine", labelParent: f.ns},
	} {
		if err := indexer.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"free": "a namespace that belongs to no tenant", "taken": "the namespace of Tenant elsewhere/someone", "mine": ""} {
		_, err := f.rest.Create(f.ctx, f.newApp(name, `{spec: {}}`), nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if want == "" {
			if err != nil {
				t.Errorf("%s: its own namespace refused: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", name, err, want)
		}
	}
}
