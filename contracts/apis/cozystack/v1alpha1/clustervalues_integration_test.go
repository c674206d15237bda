package v1alpha1_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/crds"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

// installClusterValuesCRD installs the embedded ClusterValues CRD
// (idempotent) and returns a client of its resource.
func installClusterValuesCRD(t *testing.T) dynamic.ResourceInterface {
	t.Helper()
	crd, err := crds.ClusterValues()
	if err != nil {
		t.Fatal(err)
	}
	if err := localcp.ApplyCRDs(testContext(t), env.Config, crd); err != nil {
		t.Fatalf("install the ClusterValues CRD: %v", err)
	}
	client, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return client.Resource(v1alpha1.GroupVersion.WithResource("clustervalues"))
}

func minimalClusterValues() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "ClusterValues",
		"metadata":   map[string]any{"name": v1alpha1.ClusterValuesName},
		"spec": map[string]any{
			"rootHost":          "example.org",
			"apiServerEndpoint": "https://192.0.2.1:6443",
		},
	}}
}

// TestClusterValuesDefaults creates the smallest valid ClusterValues and
// checks that the API server fills in every default, so the projected
// document has all its required keys.
func TestClusterValuesDefaults(t *testing.T) {
	testenv.Need(t, env)
	cvs := installClusterValuesCRD(t)
	got, err := cvs.Create(testContext(t), minimalClusterValues(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	var cv v1alpha1.ClusterValues
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &cv); err != nil {
		t.Fatal(err)
	}
	want := v1alpha1.ClusterValuesSpec{
		RootHost:          "example.org",
		APIServerEndpoint: "https://192.0.2.1:6443",
		Networking:        v1alpha1.ClusterValuesNetworking{ClusterDomain: "cozy.local"},
		Publishing:        v1alpha1.ClusterValuesPublishing{IngressName: "tenant-root"},
		Certificates:      v1alpha1.ClusterValuesCertificates{IssuerName: "letsencrypt-prod", Solver: "http01"},
		Gateway:           v1alpha1.ClusterValuesGateway{ClassName: "cilium"},
		Resources:         v1alpha1.ClusterValuesResources{CPUAllocationRatio: "10", MemoryAllocationRatio: "1", EphemeralStorageAllocationRatio: "40"},
	}
	if diff := cmp.Diff(want, cv.Spec); diff != "" {
		t.Errorf("defaulted spec (-want +got):\n%s", diff)
	}
}

// TestClusterValuesRejected checks that the API server refuses, with 422
// naming the field, every value a chart must never see, and any name but
// "cluster".
func TestClusterValuesRejected(t *testing.T) {
	testenv.Need(t, env)
	cvs := installClusterValuesCRD(t)
	if _, err := cvs.Create(testContext(t), minimalClusterValues(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("the valid base is rejected: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(obj map[string]any)
		field  string // the field path the error must name
	}{
		{"empty rootHost", set("", "spec", "rootHost"), "spec.rootHost"},
		{"missing rootHost", unset("spec", "rootHost"), "spec.rootHost"},
		{"empty apiServerEndpoint", set("", "spec", "apiServerEndpoint"), "spec.apiServerEndpoint"},
		{"plain-http apiServerEndpoint", set("http://192.0.2.1:6443", "spec", "apiServerEndpoint"), "spec.apiServerEndpoint"},
		{"uppercase rootHost", set("Example.org", "spec", "rootHost"), "spec.rootHost"},
		{"empty clusterDomain", set("", "spec", "networking", "clusterDomain"), "spec.networking.clusterDomain"},
		{"empty issuerName", set("", "spec", "certificates", "issuerName"), "spec.certificates.issuerName"},
		{"unknown solver", set("tls-alpn01", "spec", "certificates", "solver"), "spec.certificates.solver"},
		{"empty images registry", set("", "spec", "images", "registry"), "spec.images.registry"},
		{"unknown tenant Pod Security level", set("none", "spec", "podSecurity", "tenantLevel"), "spec.podSecurity.tenantLevel"},
		{"zero cpu ratio", set("0", "spec", "resources", "cpuAllocationRatio"), "spec.resources.cpuAllocationRatio"},
		{"bad pod CIDR", set("10.244.0.0", "spec", "networking", "podCIDR"), "spec.networking.podCIDR"},
		{"bad external IP", set([]any{"192.0.2.300"}, "spec", "publishing", "externalIPs"), "spec.publishing.externalIPs[0]"},
		{"empty exposed service", set([]any{""}, "spec", "publishing", "exposedServices"), "spec.publishing.exposedServices[0]"},
		// A CEL rule on the root reports no field ("<nil>"), and a fieldPath
		// of .metadata.name is refused by the CRD validation (metadata has
		// no properties in a CRD schema): the message names the field.
		{"name other than cluster", set("other", "metadata", "name"), "<nil>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := minimalClusterValues()
			tc.mutate(obj.Object)
			_, err := cvs.Create(testContext(t), obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err == nil {
				t.Fatalf("accepted, want 422")
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) || status.Status().Code != http.StatusUnprocessableEntity || !apierrors.IsInvalid(err) {
				t.Fatalf("got %v, want 422 Invalid", err)
			}
			t.Logf("rejected: %v", err)
			var causes []string
			if d := status.Status().Details; d != nil {
				for _, c := range d.Causes {
					causes = append(causes, c.Field)
				}
			}
			if !slices.Contains(causes, tc.field) {
				t.Errorf("causes name fields %q, want %s", causes, tc.field)
			}
			if tc.field == "<nil>" && !strings.Contains(err.Error(), "metadata.name must be 'cluster'") {
				t.Errorf("message does not explain the singleton rule: %v", err)
			}
		})
	}
}

// TestClusterValuesStatus checks the status subresource: a spec change
// bumps metadata.generation, a status write does not, and conditions are a
// map keyed by type.
func TestClusterValuesStatus(t *testing.T) {
	testenv.Need(t, env)
	cvs := installClusterValuesCRD(t)
	ctx := testContext(t)
	created, err := cvs.Create(ctx, minimalClusterValues(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cvs.Delete(context.Background(), v1alpha1.ClusterValuesName, metav1.DeleteOptions{}) })

	status := map[string]any{
		"observedGeneration": created.GetGeneration(), "totalNamespaces": int64(2), "projectedNamespaces": int64(1),
		"conditions": []any{map[string]any{
			"type": v1alpha1.ConditionProjected, "status": "False", "reason": v1alpha1.ReasonProjectionInProgress,
			"message": "1/2", "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": created.GetGeneration(),
		}},
	}
	created.Object["status"] = status
	updated, err := cvs.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if updated.GetGeneration() != created.GetGeneration() {
		t.Errorf("a status write changed generation %d -> %d", created.GetGeneration(), updated.GetGeneration())
	}
	var cv v1alpha1.ClusterValues
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(updated.Object, &cv); err != nil {
		t.Fatal(err)
	}
	if cv.Status.TotalNamespaces != 2 || cv.Status.ProjectedNamespaces != 1 || len(cv.Status.Conditions) != 1 {
		t.Errorf("status = %+v", cv.Status)
	}
	if err := unstructured.SetNestedField(updated.Object, "other.example.org", "spec", "rootHost"); err != nil {
		t.Fatal(err)
	}
	changed, err := cvs.Update(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if changed.GetGeneration() != created.GetGeneration()+1 {
		t.Errorf("a spec change left generation at %d (was %d)", changed.GetGeneration(), created.GetGeneration())
	}
}

func set(value any, path ...string) func(map[string]any) {
	return func(obj map[string]any) {
		if err := unstructured.SetNestedField(obj, runtime.DeepCopyJSONValue(value), path...); err != nil {
			panic(err)
		}
	}
}

func unset(path ...string) func(map[string]any) {
	return func(obj map[string]any) { unstructured.RemoveNestedField(obj, path...) }
}
