package conformance_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"cozystack.io/contracts/conformance"
	"cozystack.io/contracts/schemas"
)

// The K4 meta-schema (k4-values.schema.json) and the K4 rules in Go agree:
// on the base catalog's schema and on every seeded case that touches a
// values schema, the meta-schema refuses the schema (without its
// dependency keys) exactly when the Go rules report a structural K4
// finding.
func TestK4MetaSchemaAgreesWithTheRules(t *testing.T) {
	meta, err := schemas.Compile(schemas.Path("v1alpha1", schemas.K4ValuesFile))
	if err != nil {
		t.Fatal(err)
	}
	structural := map[string]bool{"K4-root": true, "K4-open-object": true, "K4-platform-keys": true}
	check := func(t *testing.T, dir string) {
		t.Helper()
		r, err := conformance.CheckDir(dir, conformance.Options{PlatformVersion: "0.1.0"})
		if err != nil {
			t.Fatal(err)
		}
		goRefuses := false
		for _, f := range r.Findings {
			goRefuses = goRefuses || structural[f.RuleID]
		}
		data, err := os.ReadFile(filepath.Join(dir, "charts", "demo", "values.schema.json"))
		if err != nil {
			t.Skip("no values schema in this case")
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		if props, ok := doc["properties"].(map[string]any); ok {
			delete(props, "cozy-lib") // the dependency's key
		}
		// Through JSON again: the validator wants its own number type.
		raw, _ := json.Marshal(doc)
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		metaErr := meta.Validate(v)
		if (metaErr != nil) != goRefuses {
			t.Errorf("meta-schema: %v; Go rules refuse: %v (%v)", metaErr, goRefuses, r.Findings)
		}
	}
	t.Run("base", func(t *testing.T) { check(t, baseCatalog) })
	for _, c := range loadCases(t) {
		touches := false
		for _, e := range c.Edits {
			touches = touches || strings.HasSuffix(e.File, "values.schema.json")
		}
		if !touches {
			continue
		}
		t.Run(c.Name, func(t *testing.T) { check(t, seed(t, c.Edits, c.Write, c.Remove)) })
	}
}
