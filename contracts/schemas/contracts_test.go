package schemas_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/schemas"
	"cozystack.io/sdk/testenv"
)

var update = flag.Bool("update", false, "rewrite pins.sum")

// Every schema's $id is BaseURL plus its path, so references resolve to
// the embedded files.
func TestSchemaIDs(t *testing.T) {
	paths, err := fs.Glob(schemas.FS(), "*/*.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		data, _ := fs.ReadFile(schemas.FS(), p)
		var doc struct {
			ID     string `json:"$id"`
			Schema string `json:"$schema"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if doc.ID != schemas.BaseURL+p || doc.Schema != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $id %q $schema %q, want %q and draft 2020-12", p, doc.ID, doc.Schema, schemas.BaseURL+p)
		}
	}
	if _, err := schemas.Compile("v1alpha1/missing.schema.json"); err == nil {
		t.Error("Compile of a missing file succeeded")
	}
}

// pins.sum holds the SHA-256 of every embedded file; a released version's
// files never change.
func TestPins(t *testing.T) {
	sums, err := schemas.FileDigests()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(sums)) {
		fmt.Fprintf(&b, "%s  %s\n", sums[p], p)
	}
	pinned := map[string]string{}
	if data, err := os.ReadFile("pins.sum"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if sum, p, ok := strings.Cut(sc.Text(), "  "); ok {
				pinned[p] = sum
			}
		}
	}
	for _, v := range schemas.Versions {
		if !v.Released {
			continue
		}
		for p, sum := range sums {
			if strings.HasPrefix(p, v.Name+"/") && pinned[p] != sum {
				t.Errorf("%s changed, but contract version %s is released: its files are frozen; add a new contract version instead (README.md)", p, v.Name)
			}
		}
	}
	if *update {
		if err := os.WriteFile("pins.sum", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile("pins.sum")
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != b.String() {
		t.Errorf("pins.sum does not match the embedded files; after an intended change run go test ./contracts/schemas -run TestPins -update\nwant:\n%s", b.String())
	}
	for _, v := range schemas.Versions {
		d, err := schemas.Digest(v.Name)
		if err != nil || !strings.HasPrefix(d, "sha256:") {
			t.Errorf("Digest(%s) = %q, %v", v.Name, d, err)
		}
	}
	if _, err := schemas.Digest("v0"); err == nil {
		t.Error("Digest of an unknown version succeeded")
	}
}

func validateFile(t *testing.T, schemaPath, file string) {
	t.Helper()
	s, err := schemas.Compile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	data, err := fs.ReadFile(schemas.FS(), file)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s is not valid under %s: %v", file, schemaPath, err)
	}
}

// The K3 and K5 lists are valid under their schemas, and the K3 document
// lists every property.
func TestLists(t *testing.T) {
	validateFile(t, schemas.Path("v1alpha1", schemas.K3PropertiesFile), schemas.Path("v1alpha1", schemas.K3PropertiesList))
	validateFile(t, schemas.Path("v1alpha1", schemas.K5CozyLibFile), schemas.Path("v1alpha1", schemas.K5HelpersList))
	props, err := schemas.K3Properties("v1alpha1")
	if err != nil || len(props) == 0 {
		t.Fatalf("K3Properties: %v, %v", props, err)
	}
	doc, _ := fs.ReadFile(schemas.FS(), "v1alpha1/k3-properties.md")
	for _, p := range props {
		if !strings.Contains(string(doc), "| `"+p.Name+"` | "+p.Type+" |") {
			t.Errorf("k3-properties.md has no row for %s (%s)", p.Name, p.Type)
		}
	}
	if !slices.ContainsFunc(props, func(p schemas.Property) bool { return p.Name == "network.stableVMAddress" }) {
		t.Error("network.stableVMAddress, which the virtualization catalog requires, is not a K3 property")
	}
	helpers, err := schemas.K5Helpers("v1alpha1")
	if err != nil || len(helpers) == 0 || !slices.IsSortedFunc(helpers, func(a, b schemas.Helper) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("K5Helpers: %v, %v", helpers, err)
	}
	keys, err := schemas.K2Keys("v1alpha1")
	_, hasRootHost := keys["_cluster"]["root-host"]
	if err != nil || !hasRootHost || !slices.Equal(keys["_cluster"]["scheduling"], []string{"defaultSchedulingClass"}) || len(keys["_namespace"]) == 0 {
		t.Errorf("K2Keys: %v, %v", keys, err)
	}
	if _, err := schemas.K3Properties("v0"); err == nil {
		t.Error("K3Properties of an unknown version succeeded")
	}
}

// The 25 upstream ADs are valid under the K1 schema (and K6 through it),
// and their openAPISchemas under the K1 meta-schema: the contract admits
// what the system we follow runs.
func TestUpstreamADsAreValidK1(t *testing.T) {
	k1, err := schemas.Compile(schemas.Path("v1alpha1", schemas.K1ApplicationFile))
	if err != nil {
		t.Fatal(err)
	}
	meta, err := schemas.Compile(schemas.Path("v1alpha1", schemas.K1ApplicationFile) + schemas.K1ValuesMetaSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range testenv.UpstreamADs(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
		if err != nil {
			t.Fatal(err)
		}
		if err := k1.Validate(v); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		text := v.(map[string]any)["spec"].(map[string]any)["application"].(map[string]any)["openAPISchema"].(string)
		sv, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		if err := meta.Validate(sv); err != nil {
			t.Errorf("%s openAPISchema: %v", f, err)
		}
	}
}

// The K1 meta-schema refuses what the extension keywords forbid.
func TestK1MetaSchema(t *testing.T) {
	meta, err := schemas.Compile(schemas.Path("v1alpha1", schemas.K1ApplicationFile) + schemas.K1ValuesMetaSchema)
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]string{
		`{"type":"object","properties":{"a":{"type":"string","x-cozystack-options":{"source":"storageclass"},"x-cozystack-widget":"textarea"}}}`: "",
		`{"type":"object","properties":{"a":{"type":"string","x-cozystack-options":{"source":"bogus"}}}}`:                                        "/properties/a/x-cozystack-options/source",
		`{"type":"object","properties":{"a":{"type":"integer","x-cozystack-options":{"source":"gpu"}}}}`:                                         "/properties/a/type",
		`{"type":"object","additionalProperties":{"type":"string","x-cozystack-widget":"slider"}}`:                                               "/additionalProperties/x-cozystack-widget",
		`{"type":"object","properties":{"a":{"type":"string","x-cozystack-hint":"x"}}}`:                                                          "x-cozystack-hint",
		`{"type":"object","properties":{"a":{"type":"string","x-cozystack-host":true}}}`:                                                         "",
		`{"type":"object","properties":{"a":{"type":"integer","x-cozystack-host":true}}}`:                                                        "/properties/a/type",
		`{"type":"object","properties":{"a":{"type":"string","x-cozystack-host":false}}}`:                                                        "/properties/a/x-cozystack-host",
		`{"type":"object","properties":{"a":{"type":"strin"}}}`:                                                                                  "/properties/a/type",
		`{"type":"object","properties":{"a":{"type":"object","x-cozystack-restore-only":true}}}`:                                                 "",
		`{"type":"object","properties":{"a":{"type":"string","x-cozystack-restore-only":"yes"}}}`:                                                "/properties/a/x-cozystack-restore-only",
		`{"type":"object","properties":{"a":{"type":"string","x-cozystack-options":{"source":"gpu","filter":"x"}}}}`:                             "filter",
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		err = meta.Validate(v)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", doc, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want an error at %s", doc, err, want)
		}
	}
}
