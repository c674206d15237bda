package schemas

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// BaseURL prefixes every embedded schema's path to form its $id.
const BaseURL = "https://cozystack.io/schemas/"

// The file names of each contract, the same in every contract version
// directory; Path joins one with a version.
const (
	K1ApplicationFile   = "k1-application.schema.json"
	K2ClusterValuesFile = "k2-cluster-values.schema.json"
	K3PropertiesFile    = "k3-properties.schema.json"
	K4ValuesFile        = "k4-values.schema.json"
	K5CozyLibFile       = "k5-cozy-lib.schema.json"
	K6DashboardFile     = "k6-dashboard.schema.json"

	// K3PropertiesList is the list of properties a version knows
	// (valid under K3PropertiesFile).
	K3PropertiesList = "k3-properties.json"
	// K5HelpersList is the list of cozy-lib's public helpers (valid under
	// K5CozyLibFile).
	K5HelpersList = "k5-cozy-lib.json"
)

// K1ValuesMetaSchema is the fragment of K1ApplicationFile holding the
// meta-schema of an ApplicationDefinition's openAPISchema.
const K1ValuesMetaSchema = "#/$defs/valuesSchema"

// K2ClusterValues is the path, in FS, of the JSON Schema of the K2 values
// document: the YAML under key values.yaml of the ConfigMap
// cozystack-values in each tenant namespace, with the objects `_cluster`
// and `_namespace`.
const K2ClusterValues = "v1alpha1/" + K2ClusterValuesFile

//go:embed v*/*.json v*/*.md
var files embed.FS

// FS returns the embedded schemas and documents: directories named after
// contract versions (v1alpha1), holding <contract>.schema.json and
// <contract>.md files. It never returns nil.
func FS() fs.FS { return files }

// Path returns the path in FS of file (e.g. K1ApplicationFile) of contract
// version version (e.g. "v1alpha1").
func Path(version, file string) string { return version + "/" + file }

// Compile compiles the embedded schema at path (e.g. K2ClusterValues) as
// JSON Schema draft 2020-12; path may end in a JSON-pointer fragment to
// compile one subschema (K2ClusterValues+"#/properties/_cluster"). The
// result validates decoded JSON values:
// map[string]any, []any, string, bool, float64 or json.Number, nil. It
// returns an error, naming path, when the file is missing or is not a
// valid schema; the package's tests rule that out for the schemas it
// ships. References to other embedded schemas resolve through BaseURL;
// the JSON Schema meta-schemas are built into the validator.
func Compile(path string) (*jsonschema.Schema, error) {
	file, fragment, _ := strings.Cut(path, "#")
	if _, err := fs.Stat(files, file); err != nil {
		return nil, fmt.Errorf("schemas: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{"https": embeddedLoader{}})
	loc := BaseURL + file
	if fragment != "" {
		loc += "#" + fragment
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schemas: compile %s: %w", path, err)
	}
	return s, nil
}

// embeddedLoader serves BaseURL+path from the embedded files and refuses
// every other URL: the schemas never reach the network.
type embeddedLoader struct{}

func (embeddedLoader) Load(url string) (any, error) {
	p, ok := strings.CutPrefix(url, BaseURL)
	if !ok {
		return nil, fmt.Errorf("%s is not an embedded schema (%s…)", url, BaseURL)
	}
	data, err := files.ReadFile(p)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", p, err)
	}
	return doc, nil
}

// Digest returns "sha256:<hex>" over the files of contract version
// version, in path order (each file's path, a NUL, its SHA-256, a
// newline): the identity of the snapshot a conformance report was made
// against. pins.sum records every file's digest; the package's tests fail
// when an embedded file no longer matches it.
func Digest(version string) (string, error) {
	sums, err := FileDigests()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	n := 0
	for _, p := range slices.Sorted(maps.Keys(sums)) {
		if strings.HasPrefix(p, version+"/") {
			fmt.Fprintf(h, "%s\x00%s\n", p, sums[p])
			n++
		}
	}
	if n == 0 {
		return "", fmt.Errorf("schemas: no embedded contract version %q", version)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// FileDigests returns the hex SHA-256 of every embedded file by path.
func FileDigests() (map[string]string, error) {
	out := map[string]string{}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[p] = hex.EncodeToString(sum[:])
		return nil
	})
	return out, err
}

// Property is one K3 property a contract version knows.
type Property struct {
	// Name is dotted lowerCamel, e.g. network.stableVMAddress.
	Name string `json:"name"`
	// Type is the JSON type of the advertised value: boolean, string or
	// array.
	Type        string `json:"type"`
	Description string `json:"description"`
	// ProvidedBy says what makes it true and who advertises it.
	ProvidedBy string `json:"providedBy"`
	// Since is the platform version that introduced it.
	Since string `json:"since,omitempty"`
}

// K3Properties returns the properties contract version version knows,
// sorted by name, from its K3PropertiesList.
func K3Properties(version string) ([]Property, error) {
	var doc struct {
		ContractVersion string     `json:"contractVersion"`
		Properties      []Property `json:"properties"`
	}
	if err := readJSON(Path(version, K3PropertiesList), &doc); err != nil {
		return nil, err
	}
	slices.SortFunc(doc.Properties, func(a, b Property) int { return strings.Compare(a.Name, b.Name) })
	return doc.Properties, nil
}

// Helper is one public helper of cozy-lib (K5).
type Helper struct {
	Name    string   `json:"name"`
	Args    []string `json:"args"`
	Returns string   `json:"returns"`
	// Reads are the K2 keys the helper reads, e.g. "_cluster.images-registry";
	// "_cluster.<KEY>" for a reader whose key is its argument.
	Reads []string `json:"reads"`
}

// K5Helpers returns cozy-lib's public helpers in contract version
// version, sorted by name, from its K5HelpersList.
func K5Helpers(version string) ([]Helper, error) {
	var doc struct {
		ContractVersion string   `json:"contractVersion"`
		Library         string   `json:"library"`
		Helpers         []Helper `json:"helpers"`
	}
	if err := readJSON(Path(version, K5HelpersList), &doc); err != nil {
		return nil, err
	}
	slices.SortFunc(doc.Helpers, func(a, b Helper) int { return strings.Compare(a.Name, b.Name) })
	return doc.Helpers, nil
}

// K2Keys returns, for each K2 object ("_cluster", "_namespace"), the keys
// contract version version provides, each with the keys of its value when
// that is an object (e.g. _cluster.scheduling: [defaultSchedulingClass]),
// read from its K2ClusterValuesFile.
func K2Keys(version string) (map[string]map[string][]string, error) {
	type node struct {
		Properties map[string]node `json:"properties"`
	}
	var doc node
	if err := readJSON(Path(version, K2ClusterValuesFile), &doc); err != nil {
		return nil, err
	}
	out := map[string]map[string][]string{}
	for obj, n := range doc.Properties {
		keys := map[string][]string{}
		for k, sub := range n.Properties {
			keys[k] = slices.Sorted(maps.Keys(sub.Properties))
		}
		out[obj] = keys
	}
	if len(out["_cluster"]) == 0 || len(out["_namespace"]) == 0 {
		return nil, fmt.Errorf("schemas: %s declares no _cluster or _namespace keys", Path(version, K2ClusterValuesFile))
	}
	return out, nil
}

func readJSON(path string, v any) error {
	data, err := files.ReadFile(path)
	if err != nil {
		return fmt.Errorf("schemas: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("schemas: decode %s: %w", path, err)
	}
	return nil
}
