// Package schemas holds the JSON Schemas (draft 2020-12) of the contracts
// between the platform and the catalogs, one directory per contract
// version, each schema beside a Markdown document of the same base name,
// embedded so that the platform, cozypkg and the conformance suite read the
// same bytes.
//
// Contract version v1alpha1:
//   - K2ClusterValues: the values document projected into every tenant
//     namespace (k2-cluster-values.schema.json, k2-cluster-values.md), and
//     the migration from the legacy Secret (k2-migration.md).
package schemas

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// K2ClusterValues is the path, in FS, of the JSON Schema of the K2 values
// document: the YAML under key values.yaml of the ConfigMap
// cozystack-values in each tenant namespace, with the objects `_cluster`
// and `_namespace`.
const K2ClusterValues = "v1alpha1/k2-cluster-values.schema.json"

//go:embed v1alpha1/*.json v1alpha1/*.md
var files embed.FS

// FS returns the embedded schemas and documents: directories named after
// contract versions (v1alpha1), holding <contract>.schema.json and
// <contract>.md files. It never returns nil.
func FS() fs.FS { return files }

// Compile compiles the embedded schema at path (e.g. K2ClusterValues) as
// JSON Schema draft 2020-12; path may end in a JSON-pointer fragment to
// compile one subschema (K2ClusterValues+"#/properties/_cluster"). The
// result validates decoded JSON values:
// map[string]any, []any, string, bool, float64 or json.Number, nil. It
// returns an error, naming path, when the file is missing or is not a
// valid schema; the package's tests rule that out for the schemas it
// ships.
func Compile(path string) (*jsonschema.Schema, error) {
	file, fragment, _ := strings.Cut(path, "#")
	data, err := files.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("schemas: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("schemas: decode %s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// Loaded under its file name; the $id inside it wins for references.
	if err := c.AddResource(file, doc); err != nil {
		return nil, fmt.Errorf("schemas: add %s: %w", file, err)
	}
	loc := file
	if fragment != "" {
		loc += "#" + fragment
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schemas: compile %s: %w", path, err)
	}
	return s, nil
}
