package apiserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// schemaAD is an ApplicationDefinition of kind named kind whose schema is
// schema, served from a chartRef (no catalog is needed to publish a kind).
func schemaAD(name, kind, plural, schema string) *v1alpha1.ApplicationDefinition {
	return &v1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ApplicationDefinitionSpec{
			Application: v1alpha1.ApplicationDefinitionApplication{Kind: kind, Singular: strings.ToLower(kind), Plural: plural, OpenAPISchema: schema},
			Release: v1alpha1.ApplicationDefinitionRelease{Prefix: strings.ToLower(kind) + "-",
				ChartRef: &v1alpha1.ChartRef{Kind: "ExternalArtifact", Name: strings.ToLower(kind), Namespace: v1alpha1.SystemNamespace}},
		},
	}
}

// servedCondition waits until the AD's Served condition is about its
// current generation and returns it.
func servedCondition(t *testing.T, name string) *metav1.Condition {
	t.Helper()
	var cond *metav1.Condition
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		var got v1alpha1.ApplicationDefinition
		if err := backend.Get(ctx, client.ObjectKey{Name: name}, &got); err != nil {
			return false, nil
		}
		cond = apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionServed)
		return cond != nil && got.Status.ObservedGeneration == got.Generation, nil
	})
	if err != nil {
		t.Fatalf("ApplicationDefinition %s has no Served condition for its generation", name)
	}
	return cond
}

// A chart values schema carries "$schema" (and K1-chart-schema has it
// copied into openAPISchema): the kind's OpenAPI still describes every
// field, so kubectl explain shows them.
func TestExplainKindWithSchemaKeyword(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	schema := `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://example.org/gizmo.json","$comment":"from the chart",
"type":"object","additionalProperties":false,
"$defs":{"unused":{"type":"string"}},
"properties":{
 "size":{"type":"integer","description":"How many gizmos.","exclusiveMinimum":0,"default":1},
 "mode":{"type":"string","const":"fast","description":"The only mode."},
 "label":{"type":["string","null"],"description":"A label, or null."}}}`
	ad := schemaAD("gizmo", "Gizmo", "gizmos", schema)
	if err := backend.Create(ctx, ad); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Delete(context.Background(), ad) })
	if c := servedCondition(t, ad.Name); c.Status != metav1.ConditionTrue {
		t.Fatalf("Served=%s %s: %s", c.Status, c.Reason, c.Message)
	}
	waitDiscovered(t, "gizmos", 10*time.Second)
	// kube-aggregator re-reads the OpenAPI v3 index once a minute (see
	// TestKubectl); a fresh cache dir keeps kubectl's own cache out.
	cacheDir := t.TempDir()
	var out string
	var err error
	deadline := time.Now().Add(75 * time.Second)
	for {
		out, err = kubectl(t, "", "--cache-dir", cacheDir, "explain", "gizmos.spec")
		if err == nil && strings.Contains(out, "size") || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if err != nil {
		t.Fatalf("kubectl explain gizmos.spec: %v", err)
	}
	for _, want := range [][]string{{"size", "<integer>"}, {"How many gizmos."}, {"mode", "<string>"}, {"label", "<string>"}} {
		if !hasLine(out, want...) {
			t.Errorf("kubectl explain gizmos.spec has no line with %q", want)
		}
	}
	out, err = kubectl(t, "", "--cache-dir", cacheDir, "explain", "gizmos.spec.mode")
	if err != nil || !strings.Contains(out, "fast") {
		t.Errorf("kubectl explain gizmos.spec.mode: %v; want the one-value enum [fast]", err)
	}
}

// A schema the kind's OpenAPI cannot carry (a $ref) is not served: the AD
// says Served=False, reason UnpublishableSchema, naming the keyword, where
// it is, and the fix.
func TestUnpublishableSchemaNotServed(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	schema := `{"type":"object","$defs":{"port":{"type":"integer"}},"properties":{"port":{"$ref":"#/$defs/port"}}}`
	ad := schemaAD("widget-ref", "WidgetRef", "widgetrefs", schema)
	if err := backend.Create(ctx, ad); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Delete(context.Background(), ad) })
	c := servedCondition(t, ad.Name)
	if c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonUnpublishableSchema {
		t.Fatalf("Served=%s %s: %s; want False UnpublishableSchema", c.Status, c.Reason, c.Message)
	}
	for _, want := range []string{`"$ref"`, "/properties/port", "inline the referenced schema", "kubectl explain"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("Served message %q lacks %q", c.Message, want)
		}
	}
}

// hasLine says whether one line of out holds every part.
func hasLine(out string, parts ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}
