package apiserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/adfixtures"
)

// applyFixtureAD creates the named upstream ApplicationDefinition and waits
// until it is served.
func applyFixtureAD(t testing.TB, name string) *v1alpha1.ApplicationDefinition {
	t.Helper()
	ad := adfixtures.Named(t, name)
	if err := backend.Create(context.Background(), ad); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// Served=True in its status makes it the incumbent of its names.
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var got v1alpha1.ApplicationDefinition
		if err := backend.Get(ctx, client.ObjectKey{Name: name}, &got); err != nil {
			return false, nil
		}
		c := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionServed)
		return c != nil && c.Status == metav1.ConditionTrue, nil
	})
	if err != nil {
		t.Fatalf("ApplicationDefinition %s never Served=True", name)
	}
	return ad
}

// waitDiscovered waits until kube-apiserver's discovery lists resource in
// apps.cozystack.io/v1alpha1 and returns how long that took.
func waitDiscovered(t *testing.T, resource string, within time.Duration) time.Duration {
	t.Helper()
	dc := discovery.NewDiscoveryClientForConfigOrDie(env.Config)
	start := time.Now()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, within, true, func(context.Context) (bool, error) {
		list, err := dc.ServerResourcesForGroupVersion("apps.cozystack.io/v1alpha1")
		if err != nil {
			return false, nil
		}
		for _, r := range list.APIResources {
			if r.Name == resource {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%s not in discovery within %s", resource, within)
	}
	return time.Since(start)
}

func TestPostgresThroughAggregation(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	applyFixtureAD(t, "postgres")
	took := waitDiscovered(t, "postgreses", 5*time.Second)
	t.Logf("postgreses in kube-apiserver discovery %s after the AD was created", took)

	ns := "e2e-postgres"
	if _, err := env.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(env.Config)
	pg := dyn.Resource(schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "postgreses"}).Namespace(ns)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
		"metadata": map[string]any{"name": "main", "labels": map[string]any{"team": "db"}},
		"spec":     map[string]any{"replicas": int64(3)},
	}}
	created, err := pg.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through kube-apiserver: %v", err)
	}
	if r, _, _ := unstructured.NestedInt64(created.Object, "spec", "replicas"); r != 3 {
		t.Errorf("created spec.replicas = %d", r)
	}
	if size, _, _ := unstructured.NestedString(created.Object, "spec", "size"); size != "10Gi" {
		t.Errorf("schema default spec.size = %q on the returned object, want 10Gi", size)
	}

	var hr helmv2.HelmRelease
	if err := backend.Get(ctx, client.ObjectKey{Namespace: ns, Name: "postgres-main"}, &hr); err != nil {
		t.Fatalf("HelmRelease postgres-main: %v", err)
	}
	if hr.Labels["apps.cozystack.io/application.kind"] != "Postgres" || hr.Spec.ChartRef == nil || hr.Spec.ChartRef.Kind != "ExternalArtifact" {
		t.Errorf("HelmRelease labels %v chartRef %+v", hr.Labels, hr.Spec.ChartRef)
	}
	if strings.Contains(string(hr.Spec.Values.Raw), "10Gi") {
		t.Errorf("schema defaults leaked into HelmRelease values: %s", hr.Spec.Values.Raw)
	}

	got, err := pg.Get(ctx, "main", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := pg.List(ctx, metav1.ListOptions{LabelSelector: "team=db"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list by label: %v, %d items", err, len(list.Items))
	}

	// A stale resourceVersion gets 409 Conflict.
	stale := got.DeepCopy()
	got.Object["spec"].(map[string]any)["replicas"] = int64(4)
	if _, err := pg.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	stale.Object["spec"].(map[string]any)["replicas"] = int64(5)
	if _, err := pg.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("update with a stale resourceVersion: %v, want 409 Conflict", err)
	}

	// The AD's x-kubernetes-validations hold: storageClass is immutable
	// (a transition rule, self == oldSelf), through a merge patch.
	patch := []byte(`{"spec":{"storageClass":"other"}}`)
	_, perr := pg.Patch(ctx, "main", types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsInvalid(perr) || !strings.Contains(perr.Error(), "spec.storageClass") || !strings.Contains(perr.Error(), "storageClass is immutable") {
		t.Errorf("changing spec.storageClass: %v, want 422 naming spec.storageClass and the rule's message", perr)
	}

	if err := pg.Delete(ctx, "main", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := backend.Get(ctx, client.ObjectKey{Namespace: ns, Name: "postgres-main"}, &hr); !apierrors.IsNotFound(err) {
		t.Errorf("HelmRelease after delete: %v, want NotFound", err)
	}
}
