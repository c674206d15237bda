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
		name   string
		reason string
		doc    string
		syntax bool
		want   string
	}{
		{
			name:   "invalid json",
			reason: "a cut-off document is the author's JSON to fix, told apart from a schema error",
			doc:    `{"type": "object",`,
			syntax: true,
			want:   "is not valid JSON",
		},
		{
			name:   "not an object",
			reason: "a schema is a JSON object; an array is refused before compiling",
			doc:    `["a"]`,
			syntax: true,
			want:   "not a JSON object",
		},
		{
			name:   "trailing data",
			reason: "a second document after the first is not silently dropped",
			doc:    `{} {}`,
			syntax: true,
			want:   "trailing data",
		},
		{
			name:   "bad type",
			reason: "valid JSON that is no valid schema is a compile error, not a syntax one",
			doc:    `{"type": "objekt"}`,
			syntax: false,
			want:   "does not compile",
		},
		{
			name:   "bad regexp",
			reason: "a pattern that is no regular expression is found when the AD is compiled, not on the first application",
			doc:    `{"type": "object", "properties": {"a": {"type": "string", "pattern": "(("}}}`,
			syntax: false,
			want:   "does not compile",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.doc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile error = %v, want it to contain %q (%s)", err, tc.want, tc.reason)
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
		name   string
		reason string
		spec   string
		want   []string
	}{
		{
			name:   "valid",
			reason: "a spec the schema allows has no errors",
			spec:   `{replicas: 3, resources: {cpu: 2}}`,
			want:   nil,
		},
		{
			name:   "int or string",
			reason: "anyOf of integer and string takes a quantity string as well as a number",
			spec:   `{resources: {cpu: "500m"}}`,
			want:   nil,
		},
		{
			name:   "wrong type",
			reason: "an error names the field by its path under spec",
			spec:   `{replicas: "three"}`,
			want:   []string{"spec.replicas"},
		},
		{
			name:   "minimum",
			reason: "bounds are checked, not only types",
			spec:   `{replicas: 0}`,
			want:   []string{"spec.replicas"},
		},
		{
			name:   "enum",
			reason: "an enum refusal lists the values that would be accepted",
			spec:   `{version: v9}`,
			want:   []string{`spec.version: Unsupported value: "v9": supported values: "v16", "v17"`},
		},
		{
			name:   "required in array item",
			reason: "required fields inside array items are checked, with the item's index in the path",
			spec:   `{databases: [{owner: x}]}`,
			want:   []string{"spec.databases[0].name: Required value"},
		},
		{
			name:   "two errors",
			reason: "every error is reported at once, in order, so one round of fixes is enough",
			spec:   `{replicas: 0, size: 5}`,
			want:   []string{"spec.replicas", "spec.size"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := s.Validate(obj(t, tc.spec))
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d (%v): %s", len(errs), errs, len(tc.want), tc.want, tc.reason)
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
