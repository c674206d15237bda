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
		reason  string
		text    string
		helpers string // templates/_helpers.tpl
		want    []string
	}{
		{
			name:    "raw field",
			reason:  "a free string printed raw into YAML can inject keys, so it is reported",
			text:    "a: {{ .Values.name }}",
			helpers: "",
			want:    []string{"name@1"},
		},
		{
			name:    "quoted",
			reason:  "quote makes a print safe",
			text:    "a: {{ .Values.name | quote }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "quoted in a call",
			reason:  "quote as a call, not a pipe, is quoting too",
			text:    "a: {{ quote .Values.name }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "toJson",
			reason:  "toJson prints a quoted JSON string",
			text:    "a: {{ toJson .Values.name }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "guarding pattern",
			reason:  "a pattern anchored at both ends that admits no YAML syntax guards the value",
			text:    "a: {{ .Values.named }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "pattern not anchored at the end",
			reason:  "a pattern not anchored at the end admits anything after its start",
			text:    "a: {{ .Values.open }}",
			helpers: "",
			want:    []string{"open@1"},
		},
		{
			name:    "pattern with a dot",
			reason:  "a pattern with . admits any character, YAML syntax included",
			text:    "a: {{ .Values.dotted }}",
			helpers: "",
			want:    []string{"dotted@1"},
		},
		{
			name:    "multi-line pattern",
			reason:  "a multi-line pattern lets a value span lines, each matching on its own",
			text:    "a: {{ .Values.multiline }}",
			helpers: "",
			want:    []string{"multiline@1"},
		},
		{
			name:    "pattern admitting whitespace",
			reason:  "a pattern admitting whitespace admits newlines",
			text:    "a: {{ .Values.spaced }}",
			helpers: "",
			want:    []string{"spaced@1"},
		},
		{
			name:    "enum",
			reason:  "an enum admits only the listed values",
			text:    "a: {{ .Values.mode }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "integer",
			reason:  "an integer prints no YAML syntax",
			text:    "a: {{ .Values.replicas }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "int or guarded string",
			reason:  "a union of an integer and a guarded string is guarded",
			text:    "a: {{ .Values.size }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "int or free string",
			reason:  "a union with a free string is free",
			text:    "a: {{ .Values.param }}",
			helpers: "",
			want:    []string{"param@1"},
		},
		{
			name:    "with",
			reason:  "with binds dot to the value, and a raw print of dot is followed there",
			text:    "{{ with .Values.name }}\na: {{ . }}\n{{ end }}",
			helpers: "",
			want:    []string{"name@2"},
		},
		{
			name:    "variable",
			reason:  "a variable holding a value is followed to where it is printed",
			text:    "{{ $n := .Values.name }}\na: {{ $n }}",
			helpers: "",
			want:    []string{"name@2"},
		},
		{
			name:    "reassigned variable",
			reason:  "a variable reassigned inside a branch carries the value it may hold",
			text:    "{{ $n := \"x\" }}{{ if .Values.replicas }}{{ $n = .Values.name }}{{ end }}\na: {{ $n }}",
			helpers: "",
			want:    []string{"name@2"},
		},
		{
			name:    "root variable in range",
			reason:  "$ reaches the root inside range, so $.Values is followed",
			text:    "{{ range .Values.names }}\na: {{ $.Values.name }}\n{{ end }}",
			helpers: "",
			want:    []string{"name@2"},
		},
		{
			name:    "range over a list",
			reason:  "range over a list of free strings prints each item: list[]",
			text:    "{{ range .Values.list }}\n- {{ . }}\n{{ end }}",
			helpers: "",
			want:    []string{"list[]@2"},
		},
		{
			name:    "range over guarded items",
			reason:  "items guarded by a pattern are safe",
			text:    "{{ range .Values.names }}\n- {{ . }}\n{{ end }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "map key",
			reason:  "a map key printed raw is a free string unless propertyNames guards it",
			text:    "{{ range $k, $v := .Values.users }}\n{{ $k }}: {{ $v.password | quote }}\n{{ end }}",
			helpers: "",
			want:    []string{"users.<key>@2"},
		},
		{
			name:    "map value",
			reason:  "a map value printed raw is followed through the range variable",
			text:    "{{ range $k, $v := .Values.users }}\n{{ $k | quote }}: {{ $v.password }}\n{{ end }}",
			helpers: "",
			want:    []string{"users.*.password@2"},
		},
		{
			name:    "map value enum",
			reason:  "a map value field that is an enum is guarded",
			text:    "{{ range .Values.users }}\nr: {{ .role }}\n{{ end }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "guarded map key",
			reason:  "map keys guarded by propertyNames are safe",
			text:    "{{ range $k, $v := .Values.dbs }}\n{{ $k }}: x\n{{ end }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "index",
			reason:  "index with constant keys reaches the map value",
			text:    "a: {{ index .Values.users \"alice\" \"password\" }}",
			helpers: "",
			want:    []string{"users.*.password@1"},
		},
		{
			name:    "printf",
			reason:  "printf builds a string from the value and prints it raw",
			text:    "a: {{ printf \"x-%s\" .Values.name }}",
			helpers: "",
			want:    []string{"name@1"},
		},
		{
			name:    "printf quoted",
			reason:  "printf quoted afterwards is safe",
			text:    "a: {{ printf \"x-%s\" .Values.name | quote }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "default",
			reason:  "default does not quote",
			text:    "a: {{ .Values.name | default \"x\" }}",
			helpers: "",
			want:    []string{"name@1"},
		},
		{
			name:    "nindent is not quoting",
			reason:  "nindent indents, it does not quote",
			text:    "a: |\n  {{- .Values.name | nindent 2 }}",
			helpers: "",
			want:    []string{"name@2"},
		},
		{
			name:    "hash and length",
			reason:  "a hash, a length and base64 print no YAML syntax",
			text:    "a: {{ sha256sum .Values.name }}{{ len .Values.name }}{{ b64enc .Values.name }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "toYaml of a typed value",
			reason:  "toYaml of a typed value writes valid YAML",
			text:    "a:\n  {{- toYaml .Values.users | nindent 2 }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "toYaml of a string",
			reason:  "toYaml of a string can still print YAML syntax unquoted",
			text:    "a: {{ toYaml .Values.name }}",
			helpers: "",
			want:    []string{"name@1"},
		},
		{
			name:    "an object printed raw",
			reason:  "an object printed raw prints its keys, which are free",
			text:    "a: {{ .Values.users }}",
			helpers: "",
			want:    []string{"users.<key>@1"},
		},
		{
			name:    "keys",
			reason:  "keys prints the map's free keys",
			text:    "a: {{ keys .Values.users | sortAlpha | join \",\" }}",
			helpers: "",
			want:    []string{"users.<key>@1"},
		},
		{
			name:    "platform values",
			reason:  "platform values (_cluster, _namespace) are the platform's, not the user's",
			text:    "a: {{ .Values._cluster.x }}{{ index .Values \"_namespace\" \"host\" }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "release",
			reason:  "release fields are the platform's, not the user's",
			text:    "a: {{ .Release.Name }}-{{ .Release.Namespace }}",
			helpers: "",
			want:    nil,
		},
		{
			name:    "helper printing raw, quoted by the caller",
			reason:  "a helper printing raw is safe when its caller quotes the result",
			text:    "a: {{ include \"raw\" . | quote }}",
			helpers: `{{ define "raw" }}{{ .Values.name }}{{ end }}`,
			want:    nil,
		},
		{
			name:    "helper printing raw",
			reason:  "a helper printing raw is reported, naming the helper and where it prints",
			text:    "a: {{ include \"raw\" . }}",
			helpers: `{{ define "raw" }}{{ .Values.name }}{{ end }}`,
			want:    []string{"name@1 (include \"raw\" prints it at charts/demo/templates/_helpers.tpl:1)"},
		},
		{
			name:    "template action",
			reason:  "the template action is followed like include",
			text:    "{{ template \"raw\" . }}",
			helpers: `{{ define "raw" }}{{ .Values.name }}{{ end }}`,
			want:    []string{"name@1 (include \"raw\" prints it at charts/demo/templates/_helpers.tpl:1)"},
		},
		{
			name:    "helper argument by position",
			reason:  "a helper argument is followed by its position in the list",
			text:    "a: {{ include \"first\" (list .Values.name $) }}\nb: {{ include \"second\" (list .Values.name $) }}",
			helpers: "{{ define \"first\" }}{{ index . 0 }}{{ end }}\n{{ define \"second\" }}{{ (index . 1).Release.Name }}{{ end }}",
			want:    []string{"name@1 (include \"first\" prints it at charts/demo/templates/_helpers.tpl:1)"},
		},
		{
			name:    "helper quoting itself",
			reason:  "a helper that quotes its argument makes the print safe",
			text:    "a: {{ include \"q\" .Values.name }}",
			helpers: `{{ define "q" }}{{ . | quote }}{{ end }}`,
			want:    nil,
		},
		{
			name:    "dict through toYaml and fromYaml",
			reason:  "values are followed through dicts round-tripped by toYaml and fromYaml",
			text:    "{{ range $n, $g := include \"groups\" . | fromYaml }}\nt: {{ $g.type }}\nn: {{ $n }}\n{{ end }}",
			helpers: "{{ define \"groups\" }}{{ $out := dict }}{{ range $n, $g := .Values.groups }}{{ $_ := set $out $n (dict \"type\" ($g.type | default \"x\")) }}{{ end }}{{ toYaml $out }}{{ end }}",
			want:    []string{"groups.*.type@2"},
		},
		{
			name:    "dict literal keys",
			reason:  "dict literals are followed key by key: only the key holding the value is reported",
			text:    "{{ $d := dict \"a\" .Values.name \"b\" \"x\" }}\na: {{ $d.b }}\nb: {{ $d.a }}",
			helpers: "",
			want:    []string{"name@3"},
		},
		{
			name:    "set with a free key",
			reason:  "set with a free key makes the dict's keys free",
			text:    "{{ $d := dict }}{{ range $k, $v := .Values.users }}{{ $_ := set $d $k \"x\" }}{{ end }}{{ range $k, $v := $d }}\n{{ $k }}: {{ $v }}\n{{ end }}",
			helpers: "",
			want:    []string{"users.<key>@2"},
		},
		{
			name:    "append",
			reason:  "append carries the list items into the new list",
			text:    "{{ $l := list }}{{ range .Values.list }}{{ $l = append $l . }}{{ end }}\na: {{ join \",\" $l }}",
			helpers: "",
			want:    []string{"list[]@2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := unquotedFindings(t, tc.text, tc.helpers)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: findings %q, want %q (%s)", tc.name, got, tc.want, tc.reason)
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
