package apiserver

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"cozystack.io/platform/internal/registry/application"
)

// The list fast path writes the bytes the JSON serializer would.
func TestListEncoderWritesWhatTheSerializerWould(t *testing.T) {
	items := []unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
			"metadata": map[string]any{"name": "a", "namespace": "t", "annotations": map[string]any{"html": "<b>&</b>"}},
			"spec":     map[string]any{"replicas": int64(2), "size": "10Gi", "nested": map[string]any{"z": true, "a": []any{1.5, "x"}}}}},
		{Object: map[string]any{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres",
			"metadata": map[string]any{"name": "b", "namespace": "t"}, "spec": map[string]any{}}},
	}
	for _, tc := range []struct {
		name  string
		items []unstructured.Unstructured
	}{{"two items", items}, {"empty", []unstructured.Unstructured{}}} {
		t.Run(tc.name, func(t *testing.T) {
			plain := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "PostgresList",
				"metadata": map[string]any{"resourceVersion": "42", "continue": "c"}}, Items: tc.items}
			fast, err := application.ListOf(plain.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			encode := func(obj runtime.Object) string {
				var buf bytes.Buffer
				ns := newNegotiatedSerializer()
				enc := ns.EncoderForVersion(ns.SupportedMediaTypes()[0].Serializer, GroupVersion)
				if err := enc.Encode(obj, &buf); err != nil {
					t.Fatal(err)
				}
				return buf.String()
			}
			if diff := cmp.Diff(encode(plain), encode(fast)); diff != "" {
				t.Errorf("fast path output differs (-serializer +fast):\n%s", diff)
			}
		})
	}
}
