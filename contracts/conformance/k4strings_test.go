package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"

	"cozystack.io/contracts/helmtemplate"
)

// stringsSchema is the values schema of the K4-unquoted-string cases.
const stringsSchema = `{
  "type": "object", "additionalProperties": false,
  "properties": {
    "name": {"type": "string"},
    "named": {"type": "string", "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$", "maxLength": 63},
    "open": {"type": "string", "pattern": "^[a-z]"},
    "dotted": {"type": "string", "pattern": "^.+$"},
    "multiline": {"type": "string", "pattern": "(?m)^[a-z]+$"},
    "spaced": {"type": "string", "pattern": "^[a-z\\s]+$"},
    "mode": {"type": "string", "enum": ["a", "b"]},
    "size": {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+Gi$"}]},
    "param": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    "replicas": {"type": "integer"},
    "list": {"type": "array", "items": {"type": "string"}},
    "names": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}},
    "users": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": false,
      "properties": {"password": {"type": "string"}, "role": {"type": "string", "enum": ["admin"]}}}},
    "dbs": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "additionalProperties": {"type": "object", "additionalProperties": false, "properties": {}}},
    "groups": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"},
      "additionalProperties": {"type": "object", "additionalProperties": false, "properties": {"type": {"type": "string"}}}},
    "resources": {"type": "object", "additionalProperties": false, "properties": {"cpu": {"type": "string", "pattern": "^[0-9]+$"}}},
    "_cluster": {"type": "object"},
    "_namespace": {"type": "object"}
  }
}`

// Every way a template prints a value that the check follows, and the
// ways that make a print safe.
func TestUnquotedStrings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string
		helpers string // templates/_helpers.tpl
		want    []string
	}{
		{"raw field", "a: {{ .Values.name }}", "", []string{"name@1"}},
		{"quoted", "a: {{ .Values.name | quote }}", "", nil},
		{"quoted in a call", "a: {{ quote .Values.name }}", "", nil},
		{"toJson", "a: {{ toJson .Values.name }}", "", nil},
		{"guarding pattern", "a: {{ .Values.named }}", "", nil},
		{"pattern not anchored at the end", "a: {{ .Values.open }}", "", []string{"open@1"}},
		{"pattern with a dot", "a: {{ .Values.dotted }}", "", []string{"dotted@1"}},
		{"multi-line pattern", "a: {{ .Values.multiline }}", "", []string{"multiline@1"}},
		{"pattern admitting whitespace", "a: {{ .Values.spaced }}", "", []string{"spaced@1"}},
		{"enum", "a: {{ .Values.mode }}", "", nil},
		{"integer", "a: {{ .Values.replicas }}", "", nil},
		{"int or guarded string", "a: {{ .Values.size }}", "", nil},
		{"int or free string", "a: {{ .Values.param }}", "", []string{"param@1"}},
		{"with", "{{ with .Values.name }}\na: {{ . }}\n{{ end }}", "", []string{"name@2"}},
		{"variable", "{{ $n := .Values.name }}\na: {{ $n }}", "", []string{"name@2"}},
		{"reassigned variable", "{{ $n := \"x\" }}{{ if .Values.replicas }}{{ $n = .Values.name }}{{ end }}\na: {{ $n }}", "", []string{"name@2"}},
		{"root variable in range", "{{ range .Values.names }}\na: {{ $.Values.name }}\n{{ end }}", "", []string{"name@2"}},
		{"range over a list", "{{ range .Values.list }}\n- {{ . }}\n{{ end }}", "", []string{"list[]@2"}},
		{"range over guarded items", "{{ range .Values.names }}\n- {{ . }}\n{{ end }}", "", nil},
		{"map key", "{{ range $k, $v := .Values.users }}\n{{ $k }}: {{ $v.password | quote }}\n{{ end }}", "", []string{"users.<key>@2"}},
		{"map value", "{{ range $k, $v := .Values.users }}\n{{ $k | quote }}: {{ $v.password }}\n{{ end }}", "", []string{"users.*.password@2"}},
		{"map value enum", "{{ range .Values.users }}\nr: {{ .role }}\n{{ end }}", "", nil},
		{"guarded map key", "{{ range $k, $v := .Values.dbs }}\n{{ $k }}: x\n{{ end }}", "", nil},
		{"index", "a: {{ index .Values.users \"alice\" \"password\" }}", "", []string{"users.*.password@1"}},
		{"printf", "a: {{ printf \"x-%s\" .Values.name }}", "", []string{"name@1"}},
		{"printf quoted", "a: {{ printf \"x-%s\" .Values.name | quote }}", "", nil},
		{"default", "a: {{ .Values.name | default \"x\" }}", "", []string{"name@1"}},
		{"nindent is not quoting", "a: |\n  {{- .Values.name | nindent 2 }}", "", []string{"name@2"}},
		{"hash and length", "a: {{ sha256sum .Values.name }}{{ len .Values.name }}{{ b64enc .Values.name }}", "", nil},
		{"toYaml of a typed value", "a:\n  {{- toYaml .Values.users | nindent 2 }}", "", nil},
		{"toYaml of a string", "a: {{ toYaml .Values.name }}", "", []string{"name@1"}},
		{"an object printed raw", "a: {{ .Values.users }}", "", []string{"users.<key>@1"}},
		{"keys", "a: {{ keys .Values.users | sortAlpha | join \",\" }}", "", []string{"users.<key>@1"}},
		{"platform values", "a: {{ .Values._cluster.x }}{{ index .Values \"_namespace\" \"host\" }}", "", nil},
		{"release", "a: {{ .Release.Name }}-{{ .Release.Namespace }}", "", nil},
		{"helper printing raw, quoted by the caller", "a: {{ include \"raw\" . | quote }}", `{{ define "raw" }}{{ .Values.name }}{{ end }}`, nil},
		{"helper printing raw", "a: {{ include \"raw\" . }}", `{{ define "raw" }}{{ .Values.name }}{{ end }}`, []string{"name@1 (include \"raw\" prints it at charts/demo/templates/_helpers.tpl:1)"}},
		{"template action", "{{ template \"raw\" . }}", `{{ define "raw" }}{{ .Values.name }}{{ end }}`, []string{"name@1 (include \"raw\" prints it at charts/demo/templates/_helpers.tpl:1)"}},
		{"helper argument by position", "a: {{ include \"first\" (list .Values.name $) }}\nb: {{ include \"second\" (list .Values.name $) }}",
			"{{ define \"first\" }}{{ index . 0 }}{{ end }}\n{{ define \"second\" }}{{ (index . 1).Release.Name }}{{ end }}", []string{"name@1 (include \"first\" prints it at charts/demo/templates/_helpers.tpl:1)"}},
		{"helper quoting itself", "a: {{ include \"q\" .Values.name }}", `{{ define "q" }}{{ . | quote }}{{ end }}`, nil},
		{"dict through toYaml and fromYaml", "{{ range $n, $g := include \"groups\" . | fromYaml }}\nt: {{ $g.type }}\nn: {{ $n }}\n{{ end }}",
			"{{ define \"groups\" }}{{ $out := dict }}{{ range $n, $g := .Values.groups }}{{ $_ := set $out $n (dict \"type\" ($g.type | default \"x\")) }}{{ end }}{{ toYaml $out }}{{ end }}",
			[]string{"groups.*.type@2"}},
		{"dict literal keys", "{{ $d := dict \"a\" .Values.name \"b\" \"x\" }}\na: {{ $d.b }}\nb: {{ $d.a }}", "", []string{"name@3"}},
		{"set with a free key", "{{ $d := dict }}{{ range $k, $v := .Values.users }}{{ $_ := set $d $k \"x\" }}{{ end }}{{ range $k, $v := $d }}\n{{ $k }}: {{ $v }}\n{{ end }}", "", []string{"users.<key>@2"}},
		{"append", "{{ $l := list }}{{ range .Values.list }}{{ $l = append $l . }}{{ end }}\na: {{ join \",\" $l }}", "", []string{"list[]@2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := unquotedFindings(t, tc.text, tc.helpers)
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings %q, want %q", got, tc.want)
			}
		})
	}
}

// unquotedFindings runs the check on a chart with stringsSchema, text as
// templates/t.yaml and helpers as templates/_helpers.tpl, and returns
// "path@line" per finding (with the define that printed it, if any).
func unquotedFindings(t *testing.T, text, helpers string) []string {
	t.Helper()
	var schema any
	if err := json.Unmarshal([]byte(stringsSchema), &schema); err != nil {
		t.Fatal(err)
	}
	c := &loadedChart{path: "charts/demo", chart: &chart.Chart{Metadata: &chart.Metadata{Name: "demo"}}, schemaDoc: schema}
	for name, body := range map[string]string{"templates/t.yaml": text, "templates/_helpers.tpl": helpers} {
		file := chartFile(c.path, name)
		trees, err := parseTemplate(file, body)
		if err != nil {
			t.Fatal(err)
		}
		c.templates = append(c.templates, &helmtemplate.File{Name: file, Text: body, Trees: trees})
	}
	var got []string
	for _, f := range checkUnquotedStrings(chartSet{c.path: c}) {
		if f.RuleID != unquotedRule || f.File != "charts/demo/templates/t.yaml" || f.Fix == "" {
			t.Errorf("finding %s", f)
		}
		s := fmt.Sprintf("%s@%d", f.Path, f.Line)
		if _, via, ok := strings.Cut(f.Message, "without quoting it ("); ok {
			s += " (" + via[:strings.Index(via, ")")] + ")"
		}
		got = append(got, s)
	}
	slices.Sort(got)
	return got
}

func TestGuardingPattern(t *testing.T) {
	for p, want := range map[string]bool{
		"^[a-z]+$":                        true,
		"^([a-z]+)?$":                     true,
		"^$|^[a-z]+$":                     true,
		"^a$|^b":                          false,
		"[a-z]+":                          false,
		"^[a-z]+":                         false,
		"[a-z]+$":                         false,
		"^.*$":                            false,
		"^[^@]+$":                         false,
		"^\\S+$":                          false, // \S admits U+2028
		"^[!-~]+$":                        true,
		"(?m)^[a-z]+$":                    false,
		"(?s)^[a-z]+$":                    true,
		"^[a-z\\n]+$":                     false,
		"^https?://[!-~]+$":               true,
		"^(\\+|-)?[0-9]+(\\.[0-9]*)?$":    true,
		"^[a-z][a-z0-9_.]*$":              true,
		"^[a-z]+\\x{2028}$":               false,
		"not a [pattern":                  false,
		"^(docker|oci-archive)://[!-~]+$": true,
	} {
		if got := guardingPattern(p); got != want {
			t.Errorf("guardingPattern(%q) = %v, want %v", p, got, want)
		}
	}
}
