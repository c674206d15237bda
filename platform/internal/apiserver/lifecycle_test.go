package apiserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/apiservertest"
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

	// A kind with no application left goes at once (its finalizer is
	// released; TestRemovingAKindInUse covers the other case).
	if err := vpns.Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
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
	if err := backend.Get(ctx, client.ObjectKey{Name: "vpn"}, &ad); !apierrors.IsNotFound(err) {
		t.Errorf("the ApplicationDefinition of a kind without applications after its deletion: %v, want it gone", err)
	}
	if _, err := vpns.Get(ctx, "before", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get of a deleted kind: %v, want 404", err)
	}
}

// TestWatchesEndWithTheirKind (K1 "Lifecycle of a kind",
// contracts/schemas/v1alpha1/k1-application.md): a watch across all
// namespaces on a kind ends within 2 s of its ApplicationDefinition's
// deletion (the stream closes, so informers relist), and a watch resumed
// from a resourceVersion read before the kind was defined anew gets 410
// Gone rather than a stream mixing the two; the application, orphaned
// by hand (its definition's finalizer removed), is served again,
// unchanged.
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
	t.Cleanup(func() { removeKind(t, "bucket") })
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
	apiservertest.WatchEnds(t, w, time.Now(), "the watch on buckets after their ApplicationDefinition was deleted")
	// The application keeps the kind served (TestRemovingAKindInUse);
	// removed by hand, the definition goes and the kind with it.
	removeKind(t, "bucket")
	waitNotFound(t, buckets.Namespace("watchend"), "kept")

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

// TestRenamedPlural (K1 "Lifecycle of a kind"): an ApplicationDefinition
// whose
// plural changes ends the watches on the old resource, discovery moves to
// the new one, and the objects are read under the new name, unchanged.
func TestRenamedPlural(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	applyFixtureAD(t, "bootbox")
	t.Cleanup(func() { removeKind(t, "bootbox") })
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
	apiservertest.WatchEnds(t, w, time.Now(), "the watch on bootboxes after the plural changed")
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

// TestRemovingAKindInUse (K1 "Removing a kind that has applications"): an
// ApplicationDefinition
// deleted while applications of its kind exist stays, served with reason
// Terminating naming their count and namespaces; creates are refused,
// reads go on, and their HelmReleases are untouched. Removing its
// finalizer by hand orphans them (404, HelmReleases untouched); the
// definition applied again serves them, unchanged. Once the last
// application is deleted, a deleted definition goes by itself. A
// definition that is not served names the applications it leaves unseen.
func TestRemovingAKindInUse(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	applyFixtureAD(t, "rabbitmq")
	t.Cleanup(func() { removeKind(t, "rabbitmq") })
	waitDiscovered(t, "rabbitmqs", 5*time.Second)
	rabbits := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "rabbitmqs"})
	apps := []struct{ ns, name string }{{"inuse-a", "one"}, {"inuse-a", "two"}, {"inuse-b", "three"}}
	for _, a := range apps {
		ensureNamespace(t, a.ns)
		if _, err := rabbits.Namespace(a.ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "RabbitMQ", "metadata": map[string]any{"name": a.name},
			"spec": map[string]any{"replicas": int64(2)}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// snapshot is every application and its HelmRelease, as stored.
	snapshot := func() map[string]any {
		out := map[string]any{}
		for _, a := range apps {
			var hr helmv2.HelmRelease
			if err := backend.Get(ctx, client.ObjectKey{Namespace: a.ns, Name: "rabbitmq-" + a.name}, &hr); err != nil {
				t.Fatalf("the HelmRelease of %s/%s: %v", a.ns, a.name, err)
			}
			out["hr/"+a.ns+"/"+a.name] = hr
			app, err := rabbits.Namespace(a.ns).Get(ctx, a.name, metav1.GetOptions{})
			if err == nil {
				out["app/"+a.ns+"/"+a.name] = app.Object
			}
		}
		return out
	}
	before := snapshot()
	served := func(reason, message string) *v1alpha1.ApplicationDefinition {
		t.Helper()
		var ad v1alpha1.ApplicationDefinition
		var last string
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := backend.Get(ctx, client.ObjectKey{Name: "rabbitmq"}, &ad); err != nil {
				last = err.Error()
				return false, nil
			}
			c := apimeta.FindStatusCondition(ad.Status.Conditions, v1alpha1.ConditionServed)
			if c == nil {
				return false, nil
			}
			last = c.Reason + ": " + c.Message
			return c.Reason == reason && strings.Contains(c.Message, message), nil
		})
		if err != nil {
			t.Fatalf("Served condition never %s naming %q; last: %s", reason, message, last)
		}
		return &ad
	}
	const count = "3 applications in 2 namespaces (inuse-a: 2, inuse-b: 1)"

	// A definition that is not served names the applications it leaves
	// unseen.
	ad := served(v1alpha1.ReasonServed, "")
	if !controllerutil.ContainsFinalizer(ad, v1alpha1.FinalizerApplications) {
		t.Fatalf("ApplicationDefinition finalizers %v, want %s", ad.Finalizers, v1alpha1.FinalizerApplications)
	}
	schemaOf := ad.Spec.Application.OpenAPISchema
	ad.Spec.Application.OpenAPISchema = `{"type":"object","properties":{"replicas":{"type":"nonsense"}}}`
	if err := backend.Update(ctx, ad); err != nil {
		t.Fatal(err)
	}
	c := apimeta.FindStatusCondition(served(v1alpha1.ReasonInvalidSchema, count).Status.Conditions, v1alpha1.ConditionServed)
	t.Logf("an invalid definition says: %s", c.Message)
	ad = served(v1alpha1.ReasonInvalidSchema, count)
	ad.Spec.Application.OpenAPISchema = schemaOf
	if err := backend.Update(ctx, ad); err != nil {
		t.Fatal(err)
	}
	served(v1alpha1.ReasonServed, "")

	// Deleted with applications: Terminating, reads go on, no creates.
	if err := backend.Delete(ctx, ad); err != nil {
		t.Fatal(err)
	}
	ad = served(v1alpha1.ReasonTerminating, count)
	c = apimeta.FindStatusCondition(ad.Status.Conditions, v1alpha1.ConditionServed)
	if c.Status != metav1.ConditionTrue {
		t.Errorf("Served while terminating: %s, want True", c.Status)
	}
	t.Logf("a deleted definition in use says: %s", c.Message)
	list, err := rabbits.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != len(apps) {
		t.Fatalf("list of a terminating kind: %v (%v), want %d items", err, list, len(apps))
	}
	_, err = rabbits.Namespace("inuse-b").Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "RabbitMQ", "metadata": map[string]any{"name": "late"}}}, metav1.CreateOptions{})
	if !apierrors.IsMethodNotSupported(err) || !strings.Contains(err.Error(), "terminating") {
		t.Errorf("create of a terminating kind: %v, want 405 naming the terminating definition", err)
	}
	if diff := cmp.Diff(before, snapshot()); diff != "" {
		t.Errorf("the applications or their HelmReleases changed while the kind was terminating (-before +after):\n%s", diff)
	}

	// Forced by hand: orphaned, untouched; applied again: served again.
	removeKind(t, "rabbitmq")
	waitNotFound(t, rabbits.Namespace("inuse-a"), "one")
	orphaned := snapshot()
	for k, v := range before {
		if strings.HasPrefix(k, "hr/") && !cmp.Equal(v, orphaned[k]) {
			t.Errorf("%s changed when its kind was removed: %s", k, cmp.Diff(v, orphaned[k]))
		}
	}
	applyFixtureAD(t, "rabbitmq")
	waitDiscovered(t, "rabbitmqs", 5*time.Second)
	if diff := cmp.Diff(before, snapshot()); diff != "" {
		t.Errorf("the applications came back changed (-before +after):\n%s", diff)
	}

	// The last application deleted, a deleted definition goes.
	if err := backend.Delete(ctx, &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: "rabbitmq"}}); err != nil {
		t.Fatal(err)
	}
	served(v1alpha1.ReasonTerminating, count)
	for _, a := range apps {
		if err := rabbits.Namespace(a.ns).Delete(ctx, a.name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(backend.Get(ctx, client.ObjectKey{Name: "rabbitmq"}, &v1alpha1.ApplicationDefinition{})), nil
	})
	if err != nil {
		t.Fatal("the deleted ApplicationDefinition stayed after its last application was deleted")
	}
	t.Logf("the definition went %s after its last application was deleted", time.Since(start).Round(time.Millisecond))
}

// waitNotFound waits until the application name is no longer served (a
// removed kind leaves the API within the definitions watcher's settle
// time).
func waitNotFound(t *testing.T, r dynamic.ResourceInterface, name string) {
	t.Helper()
	var err error
	if wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err = r.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}) != nil {
		t.Fatalf("application %s of a removed kind: %v, want 404", name, err)
	}
}

// removeKind deletes ApplicationDefinition name whatever applications of
// its kind are left, as a cluster administrator forces it (removing the
// finalizer by hand), and waits until it is gone.
func removeKind(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var ad v1alpha1.ApplicationDefinition
		err := backend.Get(ctx, client.ObjectKey{Name: name}, &ad)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, nil
		}
		if ad.DeletionTimestamp.IsZero() {
			_ = backend.Delete(ctx, &ad)
			return false, nil
		}
		if controllerutil.RemoveFinalizer(&ad, v1alpha1.FinalizerApplications) {
			_ = backend.Update(ctx, &ad)
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("ApplicationDefinition %s not removed", name)
	}
}
