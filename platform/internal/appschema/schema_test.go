package appschema

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"cozystack.io/sdk/testenv"
)

const testSchema = `{
  "type": "object",
  "properties": {
    "replicas": {"type": "integer", "default": 2, "minimum": 1},
    "size": {"type": "string", "default": "10Gi"},
    "version": {"type": "string", "enum": ["v16", "v17"], "default": "v17"},
    "oldField": {"type": "string", "deprecated": true, "description": "use newField"},
    "users": {
      "type": "object",
      "additionalProperties": {
        "type": "object",
        "properties": {"password": {"type": "string"}, "readonly": {"type": "boolean", "default": false}}
      }
    },
    "databases": {
      "type": "array",
      "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "owner": {"type": "string", "default": "app"}}}
    },
    "resources": {"type": "object", "default": {}, "properties": {"cpu": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}},
    "free": {"type": "object"},
    "preserved": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"a": {"type": "string"}}}
  }
}`

func mustCompile(t *testing.T, doc string) *Schema {
	t.Helper()
	s, err := Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func obj(t *testing.T, y string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	// The API machinery decodes integers as int64.
	return normalizeInts(m).(map[string]any)
}

func normalizeInts(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalizeInts(x)
		}
	case []any:
		for i, x := range t {
			t[i] = normalizeInts(x)
		}
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
	}
	return v
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		syntax    bool
		want      string
	}{
		{"invalid json", `{"type": "object",`, true, "is not valid JSON"},
		{"not an object", `["a"]`, true, "not a JSON object"},
		{"trailing data", `{} {}`, true, "trailing data"},
		{"bad type", `{"type": "objekt"}`, false, "does not compile"},
		{"bad regexp", `{"type": "object", "properties": {"a": {"type": "string", "pattern": "(("}}}`, false, "does not compile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.doc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile error = %v, want it to contain %q", err, tc.want)
			}
			var se *SyntaxError
			if errors.As(err, &se) != tc.syntax {
				t.Errorf("SyntaxError = %v, want %v (err %v)", errors.As(err, &se), tc.syntax, err)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	s := mustCompile(t, testSchema)
	spec := obj(t, `
users: {alice: {password: x}}
databases: [{name: db1}]
`)
	s.Default(spec)
	want := obj(t, `
replicas: 2
size: 10Gi
version: v17
resources: {}
users: {alice: {password: x, readonly: false}}
databases: [{name: db1, owner: app}]
`)
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("defaulted spec (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	s := mustCompile(t, testSchema)
	for _, tc := range []struct {
		name string
		spec string
		want []string
	}{
		{"valid", `{replicas: 3, resources: {cpu: 2}}`, nil},
		{"int or string", `{resources: {cpu: "500m"}}`, nil},
		{"wrong type", `{replicas: "three"}`, []string{"spec.replicas"}},
		{"minimum", `{replicas: 0}`, []string{"spec.replicas"}},
		{"enum", `{version: v9}`, []string{`spec.version: Unsupported value: "v9": supported values: "v16", "v17"`}},
		{"required in array item", `{databases: [{owner: x}]}`, []string{"spec.databases[0].name: Required value"}},
		{"two errors", `{replicas: 0, size: 5}`, []string{"spec.replicas", "spec.size"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := s.Validate(obj(t, tc.spec))
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d (%v)", len(errs), errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want prefix %q", i, errs[i].Error(), w)
				}
			}
		})
	}
}

func TestUnknownFieldsAndPrune(t *testing.T) {
	s := mustCompile(t, testSchema)
	spec := obj(t, `
replicas: 2
resources: {cpu: 1, memory: 1Gi}
typo: true
users: {bob: {password: x, admin: true}}
databases: [{name: a, extra: 1}]
free: {anything: {goes: here}}
preserved: {a: x, b: y}
`)
	want := []string{"spec.databases[0].extra", "spec.resources.memory", "spec.typo", "spec.users[bob].admin"}
	if diff := cmp.Diff(want, s.UnknownFields(spec)); diff != "" {
		t.Errorf("UnknownFields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, s.Prune(spec)); diff != "" {
		t.Errorf("Prune (-want +got):\n%s", diff)
	}
	if got := s.UnknownFields(spec); len(got) != 0 {
		t.Errorf("after Prune, unknown fields remain: %v", got)
	}
	if _, ok := spec["free"].(map[string]any)["anything"]; !ok {
		t.Error("Prune removed a field of a free-form object")
	}
}

func TestDeprecated(t *testing.T) {
	s := mustCompile(t, testSchema)
	got := s.Deprecated(obj(t, `{oldField: x, replicas: 2}`))
	want := []string{"spec.oldField is deprecated: use newField"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Deprecated (-want +got):\n%s", diff)
	}
}

// Every upstream ApplicationDefinition's schema compiles, and its defaults
// alone make a valid spec with no unknown fields.
// upstreamSchemas returns the openAPISchema of each upstream AD fixture,
// by file name, in file order.
func upstreamSchemas(t *testing.T) (names []string, docs map[string]string) {
	t.Helper()
	docs = map[string]string{}
	for _, f := range testenv.UpstreamADs(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var ad struct {
			Spec struct {
				Application struct {
					OpenAPISchema string `json:"openAPISchema"`
				} `json:"application"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(data, &ad); err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(f))
		docs[filepath.Base(f)] = ad.Spec.Application.OpenAPISchema
	}
	return names, docs
}

func TestUpstreamSchemas(t *testing.T) {
	names, docs := upstreamSchemas(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			s, err := Compile(docs[name])
			if err != nil {
				t.Fatal(err)
			}
			spec := map[string]any{}
			s.Default(spec)
			if errs := s.Validate(spec); len(errs) > 0 {
				b, _ := json.Marshal(spec)
				t.Errorf("defaults do not validate: %v\nspec: %s", errs, b)
			}
			if u := s.UnknownFields(spec); len(u) > 0 {
				t.Errorf("defaults hold unknown fields: %v", u)
			}
		})
	}
}
