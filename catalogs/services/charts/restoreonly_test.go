package charts_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// restoreOnly lists the fields of this catalog's charts that point an
// application at backup data, which only the backup core's restore sets
// (contract K1, k1-application.md, "Restore-only fields";
// k7-backup-driver.md, "Tenant isolation"): chart, AD file and the path of
// the field in the values schema.
var restoreOnly = []struct{ chart, ad, path string }{
	{"postgres", "postgres.yaml", "bootstrap.recovery"},
	{"mariadb", "mariadb.yaml", "bootstrap"},
}

// TestRestoreOnlyFieldsMarked: each such field is marked
// x-cozystack-restore-only in the chart's values schema and in the
// openAPISchema of its ApplicationDefinition, the schema cozystack-api
// enforces, so a tenant cannot point its Postgres or MariaDB at another
// tenant's backup.
func TestRestoreOnlyFieldsMarked(t *testing.T) {
	marked := func(doc map[string]any, path string) bool {
		node := doc
		for _, key := range strings.Split(path, ".") {
			props, _ := node["properties"].(map[string]any)
			next, ok := props[key].(map[string]any)
			if !ok {
				return false
			}
			node = next
		}
		ro, _ := node["x-cozystack-restore-only"].(bool)
		return ro
	}
	for _, f := range restoreOnly {
		raw, err := os.ReadFile(filepath.Join(f.chart, "values.schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		var chart map[string]any
		if err := json.Unmarshal(raw, &chart); err != nil {
			t.Fatal(err)
		}
		if !marked(chart, f.path) {
			t.Errorf("%s/values.schema.json: %s is not marked x-cozystack-restore-only", f.chart, f.path)
		}
		raw, err = os.ReadFile(filepath.Join("..", "applicationdefinitions", f.ad))
		if err != nil {
			t.Fatal(err)
		}
		// openAPISchema is written as one JSON line under "openAPISchema: |-".
		_, after, ok := strings.Cut(string(raw), "openAPISchema: |-\n")
		if !ok {
			t.Fatalf("applicationdefinitions/%s: no openAPISchema block", f.ad)
		}
		line, _, _ := strings.Cut(after, "\n")
		var schema map[string]any
		if err := json.Unmarshal([]byte(strings.TrimSpace(line)), &schema); err != nil {
			t.Fatalf("applicationdefinitions/%s: openAPISchema: %v", f.ad, err)
		}
		if !marked(schema, f.path) {
			t.Errorf("applicationdefinitions/%s: %s is not marked x-cozystack-restore-only", f.ad, f.path)
		}
	}
}
