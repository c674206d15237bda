package charttest

import (
	"errors"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// injectionSchema has every kind of place a tenant writes a string.
const injectionSchema = `{
  "type": "object", "additionalProperties": false,
  "properties": {
    "name": {"type": "string", "pattern": "^[a-z]+$", "default": "demo"},
    "note": {"type": "string"},
    "mode": {"type": "string", "enum": ["a", "b"]},
    "size": {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+Gi$"}]},
    "replicas": {"type": "integer"},
    "labels": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "additionalProperties": {"type": "string"}},
    "disks": {"type": "array", "items": {"type": "object", "additionalProperties": false, "required": ["name"],
      "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}, "bus": {"type": "string", "enum": ["virtio", "sata"]}}}},
    "_cluster": {"type": "object"},
    "_namespace": {"type": "object"}
  }
}`

func TestStringTargets(t *testing.T) {
	var schema map[string]any
	if err := yaml.Unmarshal([]byte(injectionSchema), &schema); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range StringTargets(schema) {
		got = append(got, tg.String())
	}
	want := []string{"disks[].bus", "disks[].name", "labels.*", "labels.<key>", "mode", "name", "note", "size"}
	if !slices.Equal(got, want) {
		t.Errorf("targets %v, want %v", got, want)
	}
}

func TestWithString(t *testing.T) {
	var schema map[string]any
	if err := yaml.Unmarshal([]byte(injectionSchema), &schema); err != nil {
		t.Fatal(err)
	}
	base := map[string]any{"labels": map[string]any{"team": "db"}}
	for _, tc := range []struct {
		target Target
		want   map[string]any
	}{
		{Target{Path: []string{"note"}}, map[string]any{"note": "S", "labels": map[string]any{"team": "db"}}},
		{Target{Path: []string{"labels", "*"}}, map[string]any{"labels": map[string]any{"team": "S"}}},
		{Target{Path: []string{"labels"}, Key: true}, map[string]any{"labels": map[string]any{"team": "db", "S": "db"}}},
		// The array and its item are made from the schema: the required name.
		{Target{Path: []string{"disks", "[]", "bus"}}, map[string]any{"labels": map[string]any{"team": "db"},
			"disks": []any{map[string]any{"name": "inj", "bus": "S"}}}},
	} {
		t.Run(tc.target.String(), func(t *testing.T) {
			got, err := withString(schema, base, tc.target, "S")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if base["labels"].(map[string]any)["team"] != "db" || len(base) != 1 {
				t.Errorf("the base values changed: %v", base)
			}
		})
	}
}

func TestReleaseObjects(t *testing.T) {
	ids, err := ReleaseObjects(map[string]string{
		"c/templates/_helpers.tpl": "kind: Secret\nmetadata: {name: partial}\n",
		"c/templates/NOTES.txt":    "kind: Secret\nmetadata: {name: notes}\n",
		"c/templates/a.yaml":       "# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b, namespace: other}\n",
		"c/templates/hook.yaml":    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hook\n  annotations: {helm.sh/hook: pre-install}\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, id := range ids {
		got = append(got, id.String())
	}
	want := []string{"batch/v1 Job (release namespace)/hook", "v1 ConfigMap (release namespace)/a", "v1 Secret other/b"}
	if !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	if _, err := ReleaseObjects(map[string]string{"c/templates/a.yaml": "kind: ConfigMap\nmetadata:\n  name: a\n  x\n"}); err == nil {
		t.Error("a manifest that does not parse gave no error")
	}
}

// CheckInjection finds what a raw print lets a payload add, in the field
// and map key contexts, with and without the schema's validation; quoting
// leaves the release as it was.
func TestCheckInjection(t *testing.T) {
	for _, tc := range []struct {
		name     string
		template string
		want     []string // target/payload/validated of the changed results
	}{
		{"quoted", `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  name: {{ .Values.name | quote }}
  note: {{ .Values.note | quote }}
  {{- range $k, $v := .Values.labels }}
  {{ $k | quote }}: {{ $v | quote }}
  {{- end }}
  {{- range .Values.disks }}
  {{ printf "disk-%s" .name | quote }}: {{ .bus | default "virtio" | quote }}
  {{- end }}
`, nil},
		{"raw", `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  name: {{ .Values.name }}
  note: {{ .Values.note }}
  {{- range $k, $v := .Values.labels }}
  {{ $k }}: {{ $v | quote }}
  {{- end }}
`, []string{
			// The pattern refuses name when validated; the templates do not.
			"name/newline/false", "name/crlf/false", "name/double-quote/false", "name/single-quote/false", "name/flow-mapping/false", "name/flow-sequence/false",
			// note is free: the schema admits every payload.
			"note/newline/true", "note/newline/false", "note/crlf/true", "note/crlf/false", "note/double-quote/true", "note/double-quote/false",
			"note/single-quote/true", "note/single-quote/false", "note/flow-mapping/true", "note/flow-mapping/false", "note/flow-sequence/true", "note/flow-sequence/false",
			"labels.<key>/map-key/false",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "demo")
			writeTree(t, dir, map[string]string{
				"Chart.yaml":          "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
				"values.yaml":         "name: demo\n",
				"values.schema.json":  injectionSchema,
				"templates/cm.yaml":   tc.template,
				"templates/_help.tpl": "{{/* nothing */}}",
			})
			bases := []Case{
				{App: "demo", Name: "defaults", Values: map[string]any{}},
				{App: "demo", Name: "full", Values: map[string]any{"note": "hi", "labels": map[string]any{"team": "db"}, "disks": []any{map[string]any{"name": "system"}}}},
			}
			checks, err := CheckInjection(dir, "demo", bases)
			if err != nil {
				t.Fatal(err)
			}
			changed := map[string]bool{}
			for _, c := range checks {
				if c.Baseline != nil {
					t.Errorf("%s (case %s): baseline: %v", c.Target, c.Base, c.Baseline)
				}
				for _, r := range c.Results {
					if r.Changed() {
						if !slices.ContainsFunc(r.Appeared, func(o ObjectID) bool { return o.Name == "injected" && o.Namespace == "kube-system" }) {
							t.Errorf("%s/%s: appeared %v, want the injected ConfigMap", r.Target, r.Payload, r.Appeared)
						}
						changed[r.Target.String()+"/"+r.Payload+"/"+map[bool]string{true: "true", false: "false"}[r.Validated]] = true
					}
					if r.Validated && r.Err != nil && !strings.Contains(r.Err.Error(), "values don't meet the specifications of the schema") && !errors.Is(r.Err, errManifest) {
						t.Errorf("%s/%s: validated render: %v", r.Target, r.Payload, r.Err)
					}
				}
			}
			got := slices.Sorted(maps.Keys(changed))
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("changed:\n  %v\nwant:\n  %v", got, want)
			}
		})
	}
}
