package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cozystack.io/contracts/conformance"
)

// adFile writes an ApplicationDefinition whose openAPISchema is schema.
func adFile(t *testing.T, schema string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	doc := `apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: gizmo
spec:
  application:
    kind: Gizmo
    singular: gizmo
    plural: gizmos
    openAPISchema: '` + schema + `'
  release:
    prefix: gizmo-
    chartRef:
      kind: ExternalArtifact
      name: gizmo
`
	f := filepath.Join(dir, "gizmo.yaml")
	if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, f
}

// K1 passes a schema with "$schema" (the chart's values schema carries it,
// and K1-chart-schema has it copied) and refuses one the application API
// could not publish as OpenAPI, naming the keyword and where it is.
func TestK1PublishedOpenAPI(t *testing.T) {
	dir, f := adFile(t, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"size":{"type":"integer"}}}`)
	r, err := conformance.CheckADFiles(dir, []string{f}, conformance.Options{PlatformVersion: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range r.Findings {
		if strings.HasPrefix(fd.RuleID, "K1-openapi") || strings.HasPrefix(fd.RuleID, "K1-cel") {
			t.Errorf("a schema with $schema: %s %s: %s", fd.RuleID, fd.Path, fd.Message)
		}
	}
	dir, f = adFile(t, `{"type":"object","$defs":{"p":{"type":"integer"}},"properties":{"port":{"$ref":"#/$defs/p"}}}`)
	if r, err = conformance.CheckADFiles(dir, []string{f}, conformance.Options{PlatformVersion: "0.1.0"}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, fd := range r.Findings {
		if fd.RuleID == "K1-openapi-schema" && strings.HasSuffix(fd.Path, "#/properties/port") && strings.Contains(fd.Message, `"$ref"`) && strings.Contains(fd.Message, "inline") {
			found = true
		}
	}
	if !found {
		t.Errorf("no K1-openapi-schema finding at #/properties/port naming $ref: %+v", r.Findings)
	}
}
