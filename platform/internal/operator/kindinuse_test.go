package operator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/apiservertest"
)

// TestKindInUse checks K1 "Removing a kind that has applications"
// (contracts/schemas/v1alpha1/k1-application.md) against the whole
// platform: the
// real operator, cozystack-api (through kube-apiserver's aggregation),
// helm-controller, registry, kube-apiserver and etcd. A catalog upgrade
// that drops a kind with applications waits (KindInUse, naming their count
// and namespaces) and touches nothing; rolling back the tag restores it
// as it was; with spec.kindRemoval Terminate the kind is served as
// Terminating until its applications are deleted, open watches end, and
// the definition goes after the last. A watch on a kind an upgrade drops
// ends within 2 s, and a watch resumed from before the kind was defined
// anew gets 410 Gone.
//
// No pod runs here: helm-controller fails to install the applications'
// releases (their namespaces have no installer ServiceAccount), which
// changes only their HelmReleases' status; specs are compared.
func TestKindInUse(t *testing.T) {
	start(t)
	c := k(t)
	ctx := ctxT(t)
	v1 := map[string]string{"doohickey": "Doohickey", "thingamajig": "Thingamajig"}
	v2 := map[string]string{"thingamajig": "Thingamajig"}
	push(t, appCatalog(t, "inuse", "1.0.0", v1), "e2e/inuse", "1.0.0")
	push(t, appCatalog(t, "inuse", "2.0.0", v2), "e2e/inuse", "2.0.0")
	ps := ociSource("inuse", "e2e/inuse", "1.0.0")
	create(t, ps)
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), ps)
		for name := range v1 {
			_ = c.Delete(context.Background(), &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}})
		}
	})
	serving := func(version string) func(*v1alpha1.PackageSource) bool {
		return func(ps *v1alpha1.PackageSource) bool {
			r := ready(ps.Status.Conditions)
			return ps.Status.Catalog != nil && ps.Status.Catalog.Version == version && r != nil &&
				r.Status == True && r.ObservedGeneration == ps.Generation
		}
	}
	waitSource(t, "inuse", "serving 1.0.0", serving("1.0.0"))

	gvr := schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "doohickeys"}
	doohickeys := dynamic.NewForConfigOrDie(env.Config).Resource(gvr)
	eventually(t, "doohickeys served", func() error {
		_, err := doohickeys.List(ctx, metav1.ListOptions{})
		return err
	})
	apps := []struct{ ns, name string }{{"kir-a", "one"}, {"kir-a", "two"}, {"kir-b", "three"}}
	for _, a := range apps {
		ensureNS(t, a.ns)
		if _, err := doohickeys.Namespace(a.ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Doohickey", "metadata": map[string]any{"name": a.name},
			"spec": map[string]any{"size": int64(2)}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// specs are the applications' specs and their HelmReleases' specs
	// and labels, as stored.
	specs := func() map[string]any {
		out := map[string]any{}
		for _, a := range apps {
			var hr helmv2.HelmRelease
			if err := c.Get(ctx, client.ObjectKey{Namespace: a.ns, Name: "doohickey-" + a.name}, &hr); err != nil {
				t.Fatalf("the HelmRelease of %s/%s: %v", a.ns, a.name, err)
			}
			out["hr/"+a.ns+"/"+a.name] = map[string]any{"uid": hr.UID, "labels": hr.Labels, "spec": hr.Spec}
			if app, err := doohickeys.Namespace(a.ns).Get(ctx, a.name, metav1.GetOptions{}); err == nil {
				out["app/"+a.ns+"/"+a.name] = app.Object["spec"]
			}
		}
		return out
	}
	before := specs()
	list, err := doohickeys.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldRV := list.GetResourceVersion()
	w, err := doohickeys.Watch(ctx, metav1.ListOptions{ResourceVersion: oldRV})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// 2.0.0 drops Doohickey: Wait (the default) installs nothing of it.
	patchTag(t, "inuse", "2.0.0")
	got := waitSource(t, "inuse", "KindInUse", sourceReady(False, v1alpha1.ReasonKindInUse))
	mustContain(t, "KindInUse message", ready(got.Status.Conditions).Message,
		"kind Doohickey (ApplicationDefinition doohickey): 3 applications in 2 namespaces (kir-a: 2, kir-b: 1)", "spec.kindRemoval")
	t.Logf("the PackageSource says: %s", ready(got.Status.Conditions).Message)
	var ad v1alpha1.ApplicationDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: "doohickey"}, &ad); err != nil || !ad.DeletionTimestamp.IsZero() {
		t.Fatalf("ApplicationDefinition doohickey while 2.0.0 waits: %v, deleted %v; want it kept", err, ad.DeletionTimestamp)
	}
	if diff := cmp.Diff(before, specs()); diff != "" {
		t.Errorf("the applications changed while the upgrade waited (-before +after):\n%s", diff)
	}
	select {
	case ev, open := <-w.ResultChan():
		if !open || ev.Type == watch.Error {
			t.Errorf("the watch on a kind that stays ended: %v", ev)
		}
	default:
	}

	// Rolled back: served as it was.
	patchTag(t, "inuse", "1.0.0")
	waitSource(t, "inuse", "serving 1.0.0 again", serving("1.0.0"))
	if diff := cmp.Diff(before, specs()); diff != "" {
		t.Errorf("the applications changed across the rollback (-before +after):\n%s", diff)
	}

	// Terminate: the definition is deleted, the kind served as
	// Terminating while its applications exist, and open watches end.
	got = &v1alpha1.PackageSource{}
	if err := c.Get(ctx, client.ObjectKey{Name: "inuse"}, got); err != nil {
		t.Fatal(err)
	}
	got.Spec.KindRemoval = v1alpha1.KindRemovalTerminate
	got.Spec.OCI.Tag = "2.0.0"
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	var deleted time.Time
	eventually(t, "ApplicationDefinition doohickey deleted", func() error {
		if err := c.Get(ctx, client.ObjectKey{Name: "doohickey"}, &ad); err != nil {
			return err
		}
		if ad.DeletionTimestamp.IsZero() {
			return fmt.Errorf("not deleted yet")
		}
		deleted = time.Now()
		return nil
	})
	apiservertest.WatchEnds(t, w, deleted, "the watch on doohickeys after their definition was deleted")
	got = waitSource(t, "inuse", "serving 2.0.0", serving("2.0.0"))
	mustContain(t, "Ready message", ready(got.Status.Conditions).Message, "Terminating", "kind Doohickey (ApplicationDefinition doohickey): 3 applications")
	eventually(t, "doohickey Served as Terminating", func() error {
		if err := c.Get(ctx, client.ObjectKey{Name: "doohickey"}, &ad); err != nil {
			return err
		}
		cond := apimeta.FindStatusCondition(ad.Status.Conditions, v1alpha1.ConditionServed)
		if cond == nil || cond.Reason != v1alpha1.ReasonTerminating || !strings.Contains(cond.Message, "3 applications in 2 namespaces (kir-a: 2, kir-b: 1)") {
			return fmt.Errorf("Served %v, want Terminating naming the applications", cond)
		}
		return nil
	})
	_, err = doohickeys.Namespace("kir-b").Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Doohickey", "metadata": map[string]any{"name": "late"}}}, metav1.CreateOptions{})
	if !apierrors.IsMethodNotSupported(err) {
		t.Errorf("create of a terminating kind: %v, want 405", err)
	}
	if diff := cmp.Diff(before, specs()); diff != "" {
		t.Errorf("the applications changed while their kind terminated (-before +after):\n%s", diff)
	}

	// The last application deleted, the definition goes.
	for _, a := range apps {
		if err := doohickeys.Namespace(a.ns).Delete(ctx, a.name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "ApplicationDefinition doohickey gone", func() error {
		if err := c.Get(ctx, client.ObjectKey{Name: "doohickey"}, &ad); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ApplicationDefinition doohickey: %v, want NotFound", err)
		}
		return nil
	})

	// Defined anew (rolled back): a watch from before is 410 Gone. Then
	// an upgrade drops the kind, unused: a watch on it ends within 2 s.
	patchTag(t, "inuse", "1.0.0")
	waitSource(t, "inuse", "serving 1.0.0 once more", serving("1.0.0"))
	eventually(t, "doohickeys served again", func() error {
		_, err := doohickeys.List(ctx, metav1.ListOptions{})
		return err
	})
	if _, err := doohickeys.Watch(ctx, metav1.ListOptions{ResourceVersion: oldRV}); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("a watch resumed from before the kind was defined anew: %v, want 410 Gone", err)
	}
	list, err = doohickeys.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w2, err := doohickeys.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	patchTag(t, "inuse", "2.0.0")
	var removed time.Time
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Name: "doohickey"}, &ad)
		removed = time.Now()
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatal("ApplicationDefinition doohickey, unused, never removed by the upgrade")
	}
	apiservertest.WatchEnds(t, w2, removed, "the watch on doohickeys after an upgrade dropped them")
}

// ensureNS creates namespace name unless it exists.
func ensureNS(t *testing.T, name string) {
	t.Helper()
	err := k(t).Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// kube-controller-manager adds these to every new namespace; a
	// fingerprint of it taken before they arrive sees them as changes.
	eventually(t, "namespace "+name+" has its default ServiceAccount and kube-root-ca.crt", func() error {
		if err := k(t).Get(ctxT(t), client.ObjectKey{Namespace: name, Name: "default"}, &corev1.ServiceAccount{}); err != nil {
			return err
		}
		return k(t).Get(ctxT(t), client.ObjectKey{Namespace: name, Name: "kube-root-ca.crt"}, &corev1.ConfigMap{})
	})
}
