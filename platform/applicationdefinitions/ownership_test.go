package applicationdefinitions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// readyOf returns "<status>/<reason>" and the message of the Ready
// condition of application name of resource gvr in ns.
func readyOf(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string) (string, string, error) {
	u, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", "", err
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, cond := range conds {
		if m := cond.(map[string]any); m["type"] == "Ready" {
			return fmt.Sprint(m["status"]) + "/" + fmt.Sprint(m["reason"]), fmt.Sprint(m["message"]), nil
		}
	}
	return "", "", fmt.Errorf("no Ready condition")
}

// Two Tenants whose derived namespaces are equal (names may hold "-"):
// whichever comes second is refused, naming the first; nothing changes
// hands and the second leaves nothing behind (docs/tenant/applications.md, "What a tenant
// may send").
func TestTenantNamespacesAreUnique(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	create := createTenant(ctx, dyn)
	mustCreate := func(ns, name, wantNS, host string) {
		t.Helper()
		if err := create(ns, name, map[string]any{}); err != nil {
			t.Fatal(err)
		}
		waitProjected(t, ctx, c, wantNS, name, map[string]any{"host": host, "monitoring": "tenant-root"})
	}
	refused := func(ns, name, takenNS, firstNS, firstName string) {
		t.Helper()
		before := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: takenNS}, before); err != nil {
			t.Fatal(err)
		}
		err := create(ns, name, map[string]any{})
		want := fmt.Sprintf("namespace %s is already the namespace of Tenant %s/%s", takenNS, firstNS, firstName)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Fatalf("Tenant %s/%s: err = %v, want 422 saying %q", ns, name, err, want)
		}
		if _, err := dyn.Resource(tenants).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the refused Tenant %s/%s exists: %v", ns, name, err)
		}
		after := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: takenNS}, after); err != nil {
			t.Fatal(err)
		}
		if after.UID != before.UID || after.Annotations["meta.helm.sh/release-name"] != before.Annotations["meta.helm.sh/release-name"] ||
			after.Labels[v1alpha1.LabelTenant] != firstName {
			t.Errorf("namespace %s changed hands: %v %v", takenNS, after.Labels, after.Annotations)
		}
	}
	// Deep first: tenant-uone-two is Tenant two of tenant-uone, so Tenant
	// uone-two of the root is refused.
	mustCreate("tenant-root", "uone", "tenant-uone", "uone.example.org")
	mustCreate("tenant-uone", "two", "tenant-uone-two", "two.uone.example.org")
	refused("tenant-root", "uone-two", "tenant-uone-two", "tenant-uone", "two")
	// Shallow first: tenant-xthree-y is Tenant xthree-y of the root, so
	// Tenant y of tenant-xthree is refused.
	mustCreate("tenant-root", "xthree-y", "tenant-xthree-y", "xthree-y.example.org")
	mustCreate("tenant-root", "xthree", "tenant-xthree", "xthree.example.org")
	refused("tenant-xthree", "y", "tenant-xthree-y", "tenant-root", "xthree-y")
}

// Two application kinds whose charts render an object of the same name:
// Stall and Booth install the same chart, which renders the ConfigMap
// "board" in the application's namespace. The second install fails, the
// Booth says Conflict naming the ConfigMap, the release and the Stall
// behind it, and is never Ready; the ConfigMap stays the Stall's, also
// after the Booth is deleted (docs/tenant/applications.md, "What a tenant may send"). (This
// was once a Space rendering a Tenant's namespace; application charts now
// install with the tenant's installer, which cannot even read a namespace:
// docs/operator/tenants.md, "Tenants: who may do what".)
func TestApplicationsNeverTakeEachOthersObjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	publishTestCatalog(t, ctx, c)
	if err := createTenant(ctx, dyn)("tenant-root", "q", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, ctx, c, "tenant-q", "q", map[string]any{"host": "q.example.org", "monitoring": "tenant-root"})
	createApp(t, ctx, dyn, stalls, "tenant-q", "one")
	eventually(t, ctx, "Stall one Ready", func() error {
		ready, msg, err := readyOf(ctx, dyn, stalls, "tenant-q", "one")
		if err != nil {
			return err
		}
		if !strings.HasPrefix(ready, "True") {
			return fmt.Errorf("Ready %s: %s", ready, msg)
		}
		return nil
	})
	owned := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant-q", Name: "board"}, owned); err != nil {
		t.Fatal(err)
	}

	createApp(t, ctx, dyn, booths, "tenant-q", "two")
	var message string
	eventually(t, ctx, "Booth two Ready=False/Conflict", func() error {
		ready, msg, err := readyOf(ctx, dyn, booths, "tenant-q", "two")
		if err != nil {
			return err
		}
		if strings.HasPrefix(ready, "True") {
			t.Fatalf("Booth two is Ready: it took the Stall's ConfigMap (%s)", msg)
		}
		if ready != "False/Conflict" {
			return fmt.Errorf("Ready %s: %s", ready, msg)
		}
		message = msg
		return nil
	})
	for _, want := range []string{`ConfigMap "board"`, "Helm release tenant-q/stall-one", "application Stall tenant-q/one"} {
		if !strings.Contains(message, want) {
			t.Errorf("Conflict message %q lacks %q", message, want)
		}
	}
	checkOwned := func(when string) {
		t.Helper()
		now := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant-q", Name: "board"}, now); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if now.UID != owned.UID || now.DeletionTimestamp != nil || now.Annotations["meta.helm.sh/release-name"] != "stall-one" {
			t.Errorf("%s: ConfigMap board changed hands: %v %v", when, now.Annotations, now.DeletionTimestamp)
		}
	}
	checkOwned("after the conflict")
	if err := dyn.Resource(booths).Namespace("tenant-q").Delete(ctx, "two", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "Booth two gone", func() error {
		_, err := dyn.Resource(booths).Namespace("tenant-q").Get(ctx, "two", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
	checkOwned("after the Booth was deleted")
}

// A Tenant whose namespace is deleted out from under it is not Ready,
// and says what is missing (docs/tenant/applications.md, "What a tenant may send").
func TestTenantWithoutNamespaceIsNotReady(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	if err := createTenant(ctx, dyn)("tenant-root", "gone", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, ctx, c, "tenant-gone", "gone", map[string]any{"host": "gone.example.org", "monitoring": "tenant-root"})
	eventually(t, ctx, "Tenant gone Ready", func() error {
		ready, msg, err := readyOf(ctx, dyn, tenants, "tenant-root", "gone")
		if err == nil && !strings.HasPrefix(ready, "True") {
			err = fmt.Errorf("Ready %s: %s", ready, msg)
		}
		return err
	})
	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-gone"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "Tenant gone Ready=False/Missing", func() error {
		ready, msg, err := readyOf(ctx, dyn, tenants, "tenant-root", "gone")
		if err != nil {
			return err
		}
		if ready != "False/Missing" || !strings.Contains(msg, "namespace tenant-gone does not exist") {
			return fmt.Errorf("Ready %s: %s", ready, msg)
		}
		return nil
	})
}

// Ready means the objects are there: an object of an application's release
// that someone else deletes is restored at the next reconcile, here asked
// for by the tenant with the Flux annotation K1 allows it
// (contracts/schemas/v1alpha1/k1-application.md, "Metadata the platform
// owns"; docs/tenant/applications.md, "What a tenant may send").
func TestDeletedObjectsAreRestored(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	if err := createTenant(ctx, dyn)("tenant-root", "drift", map[string]any{"resourceQuotas": map[string]any{"cpu": int64(4)}}); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, ctx, c, "tenant-drift", "drift", map[string]any{"host": "drift.example.org", "monitoring": "tenant-root"})
	eventually(t, ctx, "Tenant drift Ready", func() error {
		ready, msg, err := readyOf(ctx, dyn, tenants, "tenant-root", "drift")
		if err == nil && !strings.HasPrefix(ready, "True") {
			err = fmt.Errorf("Ready %s: %s", ready, msg)
		}
		return err
	})
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-drift", Name: "tenant-quota"}}
	if err := c.Get(ctx, client.ObjectKeyFromObject(quota), quota); err != nil {
		t.Fatal(err)
	}
	gone := quota.UID
	if err := c.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Format(time.RFC3339Nano)
	patch := []byte(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"` + now + `"}}}`)
	if _, err := dyn.Resource(tenants).Namespace("tenant-root").Patch(ctx, "drift", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("a tenant asking for a reconcile: %v", err)
	}
	eventually(t, ctx, "ResourceQuota tenant-drift/tenant-quota restored", func() error {
		restored := &corev1.ResourceQuota{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(quota), restored); err != nil {
			return err
		}
		if restored.UID == gone {
			return fmt.Errorf("not deleted yet")
		}
		return nil
	})
}
