package apiserver

import (
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"

	"cozystack.io/platform/internal/adfixtures"
	"cozystack.io/platform/internal/apiserver/appkinds"
)

// Every upstream kind gets a real OpenAPI description of its spec, not the
// free-form fallback.
func TestOpenAPIForUpstreamKinds(t *testing.T) {
	set := appkinds.Resolve(adfixtures.All(t))
	for _, k := range set.Served() {
		crd := CRDFor(k)
		specProps := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		if specProps.XPreserveUnknownFields != nil && *specProps.XPreserveUnknownFields && len(specProps.Properties) == 0 {
			t.Errorf("%s: spec schema fell back to free-form", k.Kind)
		}
		s3, err := builder.BuildOpenAPIV3(crd, "v1alpha1", builder.Options{AllowNonStructural: true})
		if err != nil {
			t.Errorf("%s: v3: %v", k.Kind, err)
			continue
		}
		if len(s3.Paths.Paths) == 0 {
			t.Errorf("%s: v3 document has no paths", k.Kind)
		}
		if _, err := builder.BuildOpenAPIV2(crd, "v1alpha1", builder.Options{V2: true, AllowNonStructural: true}); err != nil {
			t.Errorf("%s: v2: %v", k.Kind, err)
		}
	}
}
