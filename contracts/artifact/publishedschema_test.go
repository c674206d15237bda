package artifact_test

import (
	"strings"
	"testing"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
)

// The operator refuses definitions whose schema the application API would
// not publish (and so not serve), and passes one with "$schema".
func TestCheckPublishedSchema(t *testing.T) {
	ok := v1alpha1.ApplicationDefinitionApplication{OpenAPISchema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`}
	if errs := artifact.CheckPublishedSchema(ok); len(errs) > 0 {
		t.Errorf("a schema with $schema: %v", errs)
	}
	bad := v1alpha1.ApplicationDefinitionApplication{OpenAPISchema: `{"type":"object","patternProperties":{"^a":{}}}`}
	errs := artifact.CheckPublishedSchema(bad)
	if len(errs) != 1 || errs[0].Field != "spec.application.openAPISchema" || !strings.Contains(errs[0].Error(), `"patternProperties"`) {
		t.Errorf("errors %v, want one on spec.application.openAPISchema naming patternProperties", errs)
	}
}
