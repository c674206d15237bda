package apiserver_test

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// A changed AD changes behaviour at once, and a deleted AD's kind leaves
// kube-apiserver's discovery, all without a restart.
func TestKindChangesAndLeavesAtRunTime(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	applyFixtureAD(t, "vpn")
	waitDiscovered(t, "vpns", 5*time.Second)
	ensureNamespace(t, "lifecycle")
	vpns := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "vpns"}).Namespace("lifecycle")
	obj := func(name string, replicas int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "VPN",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"replicas": replicas}}}
	}
	if _, err := vpns.Create(ctx, obj("before", 7), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create before the change: %v", err)
	}

	// Tighten the schema: replicas at most 3.
	var ad v1alpha1.ApplicationDefinition
	if err := backend.Get(ctx, client.ObjectKey{Name: "vpn"}, &ad); err != nil {
		t.Fatal(err)
	}
	ad.Spec.Application.OpenAPISchema = `{"type":"object","properties":{"replicas":{"type":"integer","maximum":3}}}`
	if err := backend.Update(ctx, &ad); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := vpns.Create(ctx, obj("after", 7), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsInvalid(err), nil
	})
	if err != nil {
		t.Fatal("the tightened schema never applied")
	}
	t.Logf("schema change in force after %s", time.Since(start).Round(time.Millisecond))

	if err := backend.Delete(ctx, &ad); err != nil {
		t.Fatal(err)
	}
	dc := discovery.NewDiscoveryClientForConfigOrDie(env.Config)
	start = time.Now()
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		list, err := dc.ServerResourcesForGroupVersion("apps.cozystack.io/v1alpha1")
		if err != nil {
			return apierrors.IsNotFound(err), nil
		}
		for _, r := range list.APIResources {
			if r.Name == "vpns" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal("vpns still in discovery after its AD was deleted")
	}
	t.Logf("vpns gone from kube-apiserver discovery %s after the AD was deleted", time.Since(start).Round(time.Millisecond))
	if _, err := vpns.Get(ctx, "before", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get of a deleted kind: %v, want 404", err)
	}
}

// TestWatchesEndWithTheirKind (issue 16, part 1): a watch across all
// namespaces on a kind ends within 2 s of its ApplicationDefinition's
// removal (the stream closes, so informers relist and get 404), and a
// watch resumed from a resourceVersion read before the kind was defined
// anew gets 410 Gone rather than a stream mixing the two; the application
// is served again, unchanged.
func TestWatchesEndWithTheirKind(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	ad := applyFixtureAD(t, "bucket")
	waitDiscovered(t, "buckets", 5*time.Second)
	ensureNamespace(t, "watchend")
	gvr := schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "buckets"}
	buckets := dynamic.NewForConfigOrDie(env.Config).Resource(gvr)
	created, err := buckets.Namespace("watchend").Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Bucket", "metadata": map[string]any{"name": "kept"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = backend.Delete(ctx, &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: "bucket"}})
	})
	list, err := buckets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := list.GetResourceVersion()
	w, err := buckets.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if err := backend.Delete(ctx, ad); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	timeout := time.After(2 * time.Second)
	for ended := false; !ended; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				ended = true
				break
			}
			if ev.Type == "ERROR" {
				if st, _ := ev.Object.(*metav1.Status); st == nil || st.Code != 410 {
					t.Errorf("ERROR event %v, want 410 Gone", ev.Object)
				}
			}
		case <-timeout:
			t.Fatal("the watch on buckets is still open 2 s after its ApplicationDefinition was deleted")
		}
	}
	t.Logf("the watch ended %s after the ApplicationDefinition was deleted", time.Since(start).Round(time.Millisecond))

	// The kind defined anew: resuming from the old resourceVersion is 410.
	applyFixtureAD(t, "bucket")
	waitDiscovered(t, "buckets", 5*time.Second)
	_, err = buckets.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("a watch resumed from before the kind was defined anew: %v, want 410 Gone", err)
	}
	got, err := buckets.Namespace("watchend").Get(ctx, "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the application after the kind came back: %v", err)
	}
	if got.GetUID() != created.GetUID() {
		t.Errorf("the application came back as another object: uid %s, was %s", got.GetUID(), created.GetUID())
	}
	// A client that lists again watches on (an object's own older
	// resourceVersion is from before the definition too: 410, list again).
	list, err = buckets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w2, err := buckets.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatalf("a fresh watch: %v", err)
	}
	w2.Stop()
}

// TestRenamedPlural (issue 16, part 1): an ApplicationDefinition whose
// plural changes ends the watches on the old resource, discovery moves to
// the new one, and the objects are read under the new name, unchanged.
func TestRenamedPlural(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	applyFixtureAD(t, "bootbox")
	t.Cleanup(func() {
		_ = backend.Delete(ctx, &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: "bootbox"}})
	})
	waitDiscovered(t, "bootboxes", 5*time.Second)
	ensureNamespace(t, "renamed")
	dyn := dynamic.NewForConfigOrDie(env.Config)
	resource := func(plural string) dynamic.ResourceInterface {
		return dyn.Resource(schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: plural}).Namespace("renamed")
	}
	created, err := resource("bootboxes").Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "BootBox", "metadata": map[string]any{"name": "box"},
		"spec": map[string]any{"whitelistHTTP": false}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := resource("bootboxes").Watch(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	var ad v1alpha1.ApplicationDefinition
	if err := backend.Get(ctx, client.ObjectKey{Name: "bootbox"}, &ad); err != nil {
		t.Fatal(err)
	}
	ad.Spec.Application.Plural = "bootboxen"
	if err := backend.Update(ctx, &ad); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	timeout := time.After(2 * time.Second)
	for ended := false; !ended; {
		select {
		case _, ok := <-w.ResultChan():
			ended = !ok
		case <-timeout:
			t.Fatal("the watch on bootboxes is still open 2 s after the plural changed")
		}
	}
	t.Logf("the watch on the old plural ended %s after the change", time.Since(start).Round(time.Millisecond))
	waitDiscovered(t, "bootboxen", 5*time.Second)
	got, err := resource("bootboxen").Get(ctx, "box", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the object under the new plural: %v", err)
	}
	if got.GetUID() != created.GetUID() || got.Object["spec"].(map[string]any)["whitelistHTTP"] != false {
		t.Errorf("the object changed: %v", got.Object)
	}
	if _, err := resource("bootboxes").Get(ctx, "box", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the old plural: %v, want 404", err)
	}
}
