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
