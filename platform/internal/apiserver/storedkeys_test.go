package apiserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// The kind's schema before and after a catalog upgrade that renames
// maxMemory to memoryLimit (with a default the stored value must not fall
// back to).
const (
	memcacheV1 = `{"type":"object","properties":{"maxMemory":{"type":"string"},"replicas":{"type":"integer","default":1}}}`
	memcacheV2 = `{"type":"object","properties":{"memoryLimit":{"type":"string","default":"64Mi"},"replicas":{"type":"integer","default":1}}}`
)

var memcaches = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "memcaches"}

// A tenant's value stored under a key a catalog upgrade renamed survives
// every later edit (contract K4, "Stored values",
// contracts/schemas/v1alpha1/k4-values.md): an unrelated edit by update,
// JSON merge patch, kubectl apply (client-side) or server-side apply is
// refused with 422 naming spec.maxMemory, and the HelmRelease keeps
// maxMemory: 128Mi; get shows it, with a warning. A manifest that replaces
// maxMemory with memoryLimit migrates it: client-side apply sends the
// removal (maxMemory: null) its last-applied configuration computes, and
// server-side apply removes the field the applier owned and no longer
// applies, both the manifest's own explicit removal.
func TestStoredKeysSurviveACatalogUpgrade(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	ad := &v1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "memcache"},
		Spec: v1alpha1.ApplicationDefinitionSpec{
			Application: v1alpha1.ApplicationDefinitionApplication{Kind: "Memcache", Plural: "memcaches", Singular: "memcache", OpenAPISchema: memcacheV1},
			Release: v1alpha1.ApplicationDefinitionRelease{
				Prefix:   "memcache-",
				ChartRef: &v1alpha1.ChartRef{Kind: "ExternalArtifact", Name: "memcache", Namespace: "cozy-system"},
			},
		},
	}
	if err := backend.Create(ctx, ad); err != nil {
		t.Fatal(err)
	}
	ns := "stored-keys"
	t.Cleanup(func() {
		_ = backend.DeleteAllOf(context.Background(), &helmv2.HelmRelease{}, client.InNamespace(ns))
		removeKind(t, "memcache")
	})
	waitDiscovered(t, "memcaches", 10*time.Second)
	ensureNamespace(t, ns)
	res := dynamic.NewForConfigOrDie(env.Config).Resource(memcaches).Namespace(ns)

	manifest := func(name, spec string) string {
		file := filepath.Join(t.TempDir(), name+".yaml")
		body := "apiVersion: apps.cozystack.io/v1alpha1\nkind: Memcache\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\nspec:\n" + spec
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	v1 := "  maxMemory: 128Mi\n  replicas: 1\n"
	if _, err := kubectl(t, "", "apply", "-f", manifest("csa", v1)); err != nil {
		t.Fatalf("kubectl apply: %v", err)
	}
	if _, err := kubectl(t, "", "apply", "--server-side", "-f", manifest("ssa", v1)); err != nil {
		t.Fatalf("kubectl apply --server-side: %v", err)
	}
	if _, err := kubectl(t, "", "create", "-f", manifest("patched", v1)); err != nil {
		t.Fatalf("kubectl create: %v", err)
	}

	// The catalog upgrade, as the operator publishes it.
	if err := backend.Get(ctx, client.ObjectKey{Name: "memcache"}, ad); err != nil {
		t.Fatal(err)
	}
	ad.Spec.Application.OpenAPISchema = memcacheV2
	if err := backend.Update(ctx, ad); err != nil {
		t.Fatal(err)
	}
	probe := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Memcache",
		"metadata": map[string]any{"name": "probe"}, "spec": map[string]any{"memoryLimit": "1Gi"}}}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := res.Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
		return err == nil, nil
	}); err != nil {
		t.Fatal("the new schema never applied")
	}

	stored := func(name string) map[string]any {
		t.Helper()
		var hr helmv2.HelmRelease
		if err := backend.Get(ctx, client.ObjectKey{Namespace: ns, Name: "memcache-" + name}, &hr); err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if hr.Spec.Values != nil {
			if err := json.Unmarshal(hr.Spec.Values.Raw, &v); err != nil {
				t.Fatal(err)
			}
		}
		return v
	}
	refused := func(how string, out string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(out, "spec.maxMemory") || !strings.Contains(out, "no longer declares it") {
			t.Errorf("%s: %v %s; want 422 naming spec.maxMemory", how, err, out)
		}
		for _, name := range []string{"csa", "ssa"} {
			if v := stored(name); v["maxMemory"] != "128Mi" || v["replicas"] != float64(1) {
				t.Errorf("after %s, %s's values are %v, want maxMemory 128Mi, replicas 1", how, name, v)
			}
		}
	}
	refusedAPI := func(how string, err error) {
		t.Helper()
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: %v, want 422 Invalid", how, err)
			return
		}
		var fields []string
		for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
			fields = append(fields, c.Field)
		}
		if len(fields) != 1 || fields[0] != "spec.maxMemory" {
			t.Errorf("%s: causes %v, want [spec.maxMemory]", how, fields)
		}
		refused(how, err.Error(), err)
	}

	// Reads show the stored key, and get says why a write will be refused.
	out, err := kubectl(t, "", "get", "memcache", "csa", "-n", ns, "-o", "yaml")
	if err != nil || !strings.Contains(out, "maxMemory: 128Mi") || !strings.Contains(out, "Warning: spec.maxMemory is stored, but the current schema of Memcache") {
		t.Errorf("kubectl get -o yaml: %v; want maxMemory: 128Mi and a warning naming it", err)
	}
	list, err := res.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range list.Items {
		if m, _, _ := unstructured.NestedString(item.Object, "spec", "maxMemory"); m != "128Mi" {
			t.Errorf("list shows %s with spec %v, want maxMemory 128Mi", item.GetName(), item.Object["spec"])
		}
	}

	// Unrelated edits, each by another path.
	cur, err := res.Get(ctx, "csa", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(cur.Object, int64(2), "spec", "replicas")
	_, err = res.Update(ctx, cur, metav1.UpdateOptions{})
	refusedAPI("update", err)
	_, err = res.Patch(ctx, "csa", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{})
	refusedAPI("JSON merge patch", err)
	_, err = res.Patch(ctx, "csa", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"cache"}}}`), metav1.PatchOptions{})
	refusedAPI("label patch", err)
	v1edit := "  maxMemory: 128Mi\n  replicas: 2\n"
	out, err = kubectl(t, "", "apply", "-f", manifest("csa", v1edit))
	refused("kubectl apply", out, err)
	out, err = kubectl(t, "", "apply", "--server-side", "-f", manifest("ssa", v1edit))
	refused("kubectl apply --server-side", out, err)
	// Another manager applying only replicas leaves maxMemory to its
	// owner: still there, still refused.
	out, err = kubectl(t, "", "apply", "--server-side", "--field-manager", "someone-else", "--force-conflicts", "-f", manifest("ssa", "  replicas: 2\n"))
	refused("server-side apply by another manager", out, err)

	// The migration, in one request each.
	v2 := "  memoryLimit: 128Mi\n  replicas: 2\n"
	if _, err := kubectl(t, "", "apply", "-f", manifest("csa", v2)); err != nil {
		t.Errorf("kubectl apply of the migrated manifest: %v", err)
	}
	if _, err := kubectl(t, "", "apply", "--server-side", "-f", manifest("ssa", v2)); err != nil {
		t.Errorf("kubectl apply --server-side of the migrated manifest: %v", err)
	}
	for _, name := range []string{"csa", "ssa"} {
		if v := stored(name); v["maxMemory"] != nil || v["memoryLimit"] != "128Mi" || v["replicas"] != float64(2) {
			t.Errorf("%s's values after the migration are %v, want memoryLimit 128Mi, replicas 2", name, v)
		}
	}
	// A merge patch that nulls the key and sets the new one does the
	// same.
	_, err = res.Patch(ctx, "patched", types.MergePatchType, []byte(`{"spec":{"maxMemory":null,"memoryLimit":"128Mi"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Errorf("merge patch moving maxMemory to memoryLimit: %v", err)
	}
	if v := stored("patched"); v["maxMemory"] != nil || v["memoryLimit"] != "128Mi" {
		t.Errorf("values after the moving merge patch are %v, want memoryLimit 128Mi only", v)
	}
}
