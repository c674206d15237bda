package v1alpha1_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/crds"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

// TestUpstreamApplicationDefinitions creates every upstream AD, unchanged,
// against the generated CRD and checks that neither the CRD's structural
// schema nor the Go types lose a field.
func TestUpstreamApplicationDefinitions(t *testing.T) {
	testenv.Need(t, env)
	files := testenv.UpstreamADs(t)
	ads := installCRD(t)

	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			ctx := testContext(t)
			in := readAD(t, file)

			// The API server accepts it as is; strict field validation turns
			// a field the schema would prune into an error naming it.
			if _, err := ads.Create(ctx, in.DeepCopy(), metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}); err != nil {
				t.Fatalf("create %s: %v", in.GetName(), err)
			}
			t.Cleanup(func() {
				_ = ads.Delete(context.Background(), in.GetName(), metav1.DeleteOptions{})
			})

			stored, err := ads.Get(ctx, in.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get %s: %v", in.GetName(), err)
			}
			if diff := cmp.Diff(in.Object["spec"], stored.Object["spec"]); diff != "" {
				t.Errorf("stored spec differs from the fixture: the CRD schema pruned or changed a field (-fixture +stored):\n%s", diff)
			}
			if diff := cmp.Diff(in.GetAnnotations(), stored.GetAnnotations()); diff != "" {
				t.Errorf("stored metadata.annotations differ from the fixture (-fixture +stored):\n%s", diff)
			}

			// The Go types hold every field: a strict decode of the stored
			// object, re-encoded, gives the same spec back.
			raw, err := stored.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var ad v1alpha1.ApplicationDefinition
			strictErrs, err := sigsjson.UnmarshalStrict(raw, &ad)
			if err != nil {
				t.Fatalf("decode into v1alpha1.ApplicationDefinition: %v", err)
			}
			if len(strictErrs) > 0 {
				t.Errorf("fields unknown to v1alpha1.ApplicationDefinition: %v", errors.Join(strictErrs...))
			}
			specJSON, err := json.Marshal(ad.Spec)
			if err != nil {
				t.Fatal(err)
			}
			var spec map[string]any
			if err := utiljson.Unmarshal(specJSON, &spec); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(in.Object["spec"], any(spec)); diff != "" {
				t.Errorf("spec does not round-trip through v1alpha1.ApplicationDefinitionSpec (-fixture +typed):\n%s", diff)
			}
			if diff := cmp.Diff(in.GetAnnotations(), ad.Annotations); diff != "" {
				t.Errorf("annotations do not round-trip through v1alpha1.ApplicationDefinition (-fixture +typed):\n%s", diff)
			}
		})
	}
}

// TestInvalidApplicationDefinitions checks that the CRD rejects invalid ADs
// with 422 Unprocessable Entity naming the offending field.
func TestInvalidApplicationDefinitions(t *testing.T) {
	testenv.Need(t, env)
	ads := installCRD(t)

	valid := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(),
			"kind":       "ApplicationDefinition",
			"metadata":   map[string]any{"name": "invalid-test"},
			"spec": map[string]any{
				"application": map[string]any{"kind": "Postgres", "singular": "postgres", "plural": "postgreses"},
				"release": map[string]any{
					"prefix":   "postgres-",
					"chartRef": map[string]any{"kind": "ExternalArtifact", "name": "postgres", "namespace": "cozy-system"},
				},
			},
		}}
	}

	// The base is valid, so each case fails for its own mutation only.
	if _, err := ads.Create(testContext(t), valid(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("the valid base AD is rejected: %v", err)
	}

	for _, tc := range []struct {
		name  string
		field string // the field path the error must name
		value any
	}{
		{name: "lowercase application.kind", field: "spec.application.kind", value: "postgres"},
		{name: "chartRef.kind not in the enum", field: "spec.release.chartRef.kind", value: "GitRepository"},
		{name: "uppercase application.plural", field: "spec.application.plural", value: "Postgreses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := valid()
			if err := unstructured.SetNestedField(obj.Object, tc.value, strings.Split(tc.field, ".")...); err != nil {
				t.Fatal(err)
			}
			_, err := ads.Create(testContext(t), obj, metav1.CreateOptions{})
			if err == nil {
				_ = ads.Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{})
				t.Fatalf("%s=%v accepted, want 422", tc.field, tc.value)
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) || status.Status().Code != http.StatusUnprocessableEntity || !apierrors.IsInvalid(err) {
				t.Fatalf("%s=%v: got %v, want 422 Invalid", tc.field, tc.value, err)
			}
			t.Logf("rejected: %v", err)
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("message does not name %s: %v", tc.field, err)
			}
			var causes []string
			if d := status.Status().Details; d != nil {
				for _, c := range d.Causes {
					causes = append(causes, c.Field)
				}
			}
			if !slices.Contains(causes, tc.field) {
				t.Errorf("causes name fields %q, want %s", causes, tc.field)
			}
		})
	}
}

// TestUnknownFieldRejected checks that the strict field validation the
// fixture test creates with reports a field the schema would prune, by its
// path, instead of dropping it silently.
func TestUnknownFieldRejected(t *testing.T) {
	testenv.Need(t, env)
	ads := installCRD(t)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "ApplicationDefinition",
		"metadata":   map[string]any{"name": "unknown-field-test"},
		"spec": map[string]any{
			"application": map[string]any{"kind": "Postgres", "singular": "postgres", "plural": "postgreses"},
			"release":     map[string]any{"prefix": "postgres-", "notInSchema": "x"},
		},
	}}
	_, err := ads.Create(testContext(t), obj, metav1.CreateOptions{
		DryRun:          []string{metav1.DryRunAll},
		FieldValidation: metav1.FieldValidationStrict,
	})
	if err == nil {
		t.Fatal("an unknown field was accepted under strict field validation")
	}
	t.Logf("rejected: %v", err)
	if !strings.Contains(err.Error(), "spec.release.notInSchema") {
		t.Errorf("message does not name spec.release.notInSchema: %v", err)
	}
}

// installCRD installs the embedded ApplicationDefinition CRD (idempotent)
// and returns a client of its resource.
func installCRD(t *testing.T) dynamic.ResourceInterface {
	t.Helper()
	data, ok := crds.Files()[crds.ApplicationDefinitionFile]
	if !ok {
		t.Fatalf("crds.Files() lacks %s", crds.ApplicationDefinitionFile)
	}
	file := filepath.Join(t.TempDir(), crds.ApplicationDefinitionFile)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := localcp.ApplyCRDFiles(testContext(t), env.Config, file); err != nil {
		t.Fatalf("install the ApplicationDefinition CRD: %v", err)
	}
	client, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return client.Resource(v1alpha1.GroupVersion.WithResource("applicationdefinitions"))
}

// readAD reads a fixture holding exactly one ApplicationDefinition. Numbers
// decode as int64 or float64, as in objects read from the API server.
func readAD(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := localcp.SplitYAML(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(docs) != 1 {
		t.Fatalf("%s holds %d YAML documents, want 1", file, len(docs))
	}
	js, err := yaml.YAMLToJSON(docs[0])
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if gvk := obj.GroupVersionKind(); gvk != v1alpha1.GroupVersion.WithKind("ApplicationDefinition") {
		t.Fatalf("%s holds a %s, want an ApplicationDefinition", file, gvk)
	}
	return obj
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
