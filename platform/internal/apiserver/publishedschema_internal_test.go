package apiserver

import (
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/adfixtures"
	"cozystack.io/platform/internal/apiserver/appkinds"
)

// The OpenAPI v3 document of a kind whose schema carries "$schema" and
// the other annotation keywords of JSON Schema describes its fields, not a
// bare object.
func TestPublishedOpenAPIOfSchemaWithDialect(t *testing.T) {
	ad := &v1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmo"},
		Spec: v1alpha1.ApplicationDefinitionSpec{
			Application: v1alpha1.ApplicationDefinitionApplication{Kind: "Gizmo", Singular: "gizmo", Plural: "gizmos", OpenAPISchema: `{
"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://example.org/g.json","$comment":"c",
"type":"object","properties":{"size":{"type":"integer","exclusiveMinimum":0,"x-cozystack-widget":"text"}}}`},
			Release: v1alpha1.ApplicationDefinitionRelease{ChartRef: &v1alpha1.ChartRef{Kind: "ExternalArtifact", Name: "gizmo"}},
		},
	}
	k, f := appkinds.Compile(ad)
	if f != nil {
		t.Fatal(f)
	}
	s3, err := builder.BuildOpenAPIV3(CRDFor(k), GroupVersion.Version, builder.Options{AllowNonStructural: true})
	if err != nil {
		t.Fatal(err)
	}
	obj := s3.Components.Schemas["io.cozystack.apps.v1alpha1.Gizmo"]
	if obj == nil {
		t.Fatalf("no schema of Gizmo in %v", s3.Components.Schemas)
	}
	size := obj.Properties["spec"].Properties["size"]
	if len(size.Type) != 1 || size.Type[0] != "integer" || size.Minimum == nil || *size.Minimum != 0 || !size.ExclusiveMinimum {
		t.Errorf("spec.size published as %+v; want an integer with exclusive minimum 0", size.SchemaProps)
	}
}

// No upstream definition loses its kind to the OpenAPI rule.
func TestUpstreamSchemasPublishable(t *testing.T) {
	set := appkinds.Resolve(adfixtures.All(t))
	for name, f := range set.Failures {
		if f.Reason == v1alpha1.ReasonUnpublishableSchema {
			t.Errorf("%s: %s", name, f.Message)
		}
	}
}
