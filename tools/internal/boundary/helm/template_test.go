package helm

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func refs(tf *templateFile) []string {
	var out []string
	for _, r := range tf.refs {
		kind := []string{"include", "lookup", "has", "apiVersion"}[r.kind]
		if r.expr != nil || r.dynamic {
			out = append(out, fmt.Sprintf("%s computed(%s) :%d", kind, r.text, r.line))
			continue
		}
		out = append(out, fmt.Sprintf("%s %q :%d", kind, r.value, r.line))
	}
	return out
}

func TestParseTemplate(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"include in a pipeline", `{{ include "a.labels" . | nindent 4 }}`, []string{`include "a.labels" :1`}},
		{"template action", "x\n{{ template \"a.name\" . }}", []string{`include "a.name" :2`}},
		{"nested include", `{{ printf "%s-%s" (include "a.name" .) "x" }}`, []string{`include "a.name" :1`}},
		{"include in a define", "{{ define \"b\" }}\n{{ include \"a\" . }}{{ end }}", []string{`include "a" :2`}},
		{"include in if, else, range and with", "{{ if include \"a\" . }}{{ else }}{{ include \"b\" . }}{{ end }}\n{{ range $x := list 1 }}{{ include \"c\" $x }}{{ end }}{{ with .Values }}{{ template \"d\" . }}{{ end }}",
			[]string{`include "a" :1`, `include "b" :1`, `include "c" :2`, `include "d" :2`}},
		{"computed include", `{{ include (printf "%s.x" .Chart.Name) . }}`, []string{`include computed(include (printf "%s.x" .Chart.Name) .) :1`}},
		{"lookup with its kind", "\n{{ (lookup \"postgresql.cnpg.io/v1\" \"Cluster\" \"\" \"\").items }}", []string{`lookup "postgresql.cnpg.io/v1 Cluster" :2`}},
		{"lookup in assignment", `{{- $s := lookup "v1" "Secret" .Release.Namespace "x" }}`, []string{`lookup "v1 Secret" :1`}},
		{"lookup of a computed kind", `{{ lookup "a.io/v1" .Values.kind "" "" }}`, []string{`lookup "a.io/v1" :1`}},
		{"computed lookup", "{{ $apiVersion := .Values.api }}\n{{ lookup $apiVersion \"Cluster\" \"\" \"\" }}", []string{`lookup computed(lookup $apiVersion "Cluster" "" "") :2`}},
		{"computed Has", `{{ if .Capabilities.APIVersions.Has .Values.api }}{{ end }}`, []string{`has computed(.Capabilities.APIVersions.Has .Values.api) :1`}},
		{"computed Has piped", `{{ if printf "%s/v1" .Values.g | .Capabilities.APIVersions.Has }}{{ end }}`, []string{`has computed(printf "%s/v1" .Values.g | .Capabilities.APIVersions.Has) :1`}},
		{"Has on .Capabilities", `{{ if .Capabilities.APIVersions.Has "kubevirt.io/v1" }}{{ end }}`, []string{`has "kubevirt.io/v1" :1`}},
		{"Has on $.Capabilities", `{{ if and true ($.Capabilities.APIVersions.Has "a.io/v1/Kind") }}{{ end }}`, []string{`has "a.io/v1/Kind" :1`}},
		{"Has on a variable", `{{ $c := .Capabilities }}{{ if $c.APIVersions.Has "b.io/v1" }}{{ end }}`, []string{`has "b.io/v1" :1`}},
		{"Has piped", `{{ if "c.io/v1" | .Capabilities.APIVersions.Has }}{{ end }}`, []string{`has "c.io/v1" :1`}},
		{"apiVersion with its kind after", "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n", []string{`apiVersion "kubevirt.io/v1 VirtualMachine" :1`}},
		{"apiVersion with its kind before, quoted", "kind: Cluster\napiVersion: \"postgresql.cnpg.io/v1\"\n", []string{`apiVersion "postgresql.cnpg.io/v1 Cluster" :2`}},
		{"apiVersion in a list, per document", "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: a.io/v1\n    kind: A\n---\napiVersion: b.io/v2\n",
			[]string{`apiVersion "a.io/v1 A" :4`, `apiVersion "b.io/v2" :7`}},
		{"templated apiVersion is not a reference", "apiVersion: {{ .Values.api }}\nkind: X\n", nil},
		{"commented apiVersion is not a reference", "# apiVersion: a.io/v1\n{{/* apiVersion: b.io/v1 */}}\n", nil},
		{"after a trimmed action", "{{- if .Values.x -}}\napiVersion: a.io/v1\n{{- end }}", []string{`apiVersion "a.io/v1" :2`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tf := parseTemplate("t.yaml", tc.text)
			if tf.err != nil {
				t.Fatal(tf.err)
			}
			if got := refs(tf); !slices.Equal(got, tc.want) {
				t.Errorf("refs\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestDefines(t *testing.T) {
	tf := parseTemplate("t.tpl", "{{/* x */}}\n{{- define \"a.one\" -}}1{{ end }}\n\n{{ block \"a.two\" . }}2{{ end }}\n")
	var got []string
	for _, d := range tf.defines {
		got = append(got, fmt.Sprintf("%s:%d", d.name, d.line))
	}
	if want := []string{"a.one:2", "a.two:4"}; !slices.Equal(got, want) {
		t.Errorf("defines %v, want %v", got, want)
	}
}

// Helm's functions parse; what Helm removes or never had does not, and the
// regex scan then stands in.
func TestParseErrorsAndFallback(t *testing.T) {
	for _, ok := range []string{
		`{{ toYaml .Values | indent 2 }}{{ tpl "x" . }}{{ required "m" .Values.x }}{{ fromJson "{}" }}{{ toToml . }}`,
		`{{ semverCompare ">=1.0" .Capabilities.KubeVersion.Version }}{{ b64enc "x" }}{{ uuidv4 }}{{ mustToJson . }}`,
	} {
		if tf := parseTemplate("ok.yaml", ok); tf.err != nil {
			t.Errorf("%s: %v", ok, tf.err)
		}
	}
	text := "{{ define \"x.y\" }}{{ end }}\n{{ env \"HOME\" }}\n{{ include \"a.b\" . }}\n{{ if .Capabilities.APIVersions.Has \"k.io/v1\" }}\napiVersion: p.io/v1\n{{ end }}\n{{ lookup \"q.io/v1\" \"Q\" \"\" \"\" }}"
	tf := parseTemplate("bad.yaml", text)
	if tf.err == nil || !strings.Contains(tf.err.Error(), `function "env" not defined`) || tf.errLine != 2 {
		t.Fatalf("err %v at %d", tf.err, tf.errLine)
	}
	want := []string{`include "a.b" :3`, `has "k.io/v1" :4`, `apiVersion "p.io/v1" :5`, `lookup "q.io/v1 Q" :7`}
	if got := refs(tf); !slices.Equal(got, want) {
		t.Errorf("fallback refs\n got %q\nwant %q", got, want)
	}
	if len(tf.defines) != 1 || tf.defines[0].name != "x.y" || tf.defines[0].line != 1 {
		t.Errorf("fallback defines %v", tf.defines)
	}
}

// A computed argument resolves when it is built from literals, the chart's
// name and its templates' base path, with . and $ the root context.
func TestResolve(t *testing.T) {
	ctx := evalContext{chartName: "nats", basePath: "top/charts/nats/templates"}
	for _, tc := range []struct {
		name, text, want string
		ok               bool
	}{
		{"literal", `{{ include "a" . }}`, "a", true},
		{"base path idiom", `{{ include (print $.Template.BasePath "/config.yaml") . | sha256sum }}`, "top/charts/nats/templates/config.yaml", true},
		{"base path on dot", `{{ include (print .Template.BasePath "/c.yaml") . }}`, "top/charts/nats/templates/c.yaml", true},
		{"printf of the chart name", `{{ include (printf "%s.labels" .Chart.Name) . }}`, "nats.labels", true},
		{"printf of literals", `{{ lookup (printf "%s/%s" "kubevirt.io" "v1") "VirtualMachine" "" "" }}`, "kubevirt.io/v1 VirtualMachine", true},
		{"values", `{{ include (printf "%s.x" .Values.name) . }}`, "", false},
		{"variable", `{{ $gv := "a.io/v1" }}{{ lookup $gv "A" "" "" }}`, "", false},
		{"other function", `{{ include (lower "A") . }}`, "", false},
		{"dot inside with", `{{ with .Values }}{{ include (printf "%s.x" .Chart.Name) . }}{{ end }}`, "", false},
		{"$ inside with", `{{ with .Values }}{{ include (printf "%s.x" $.Chart.Name) . }}{{ end }}`, "nats.x", true},
		{"$ inside a define", `{{ define "d" }}{{ include (printf "%s.x" $.Chart.Name) . }}{{ end }}`, "", false},
		{"else of with", `{{ with .Values.x }}{{ else }}{{ include (printf "%s.y" .Chart.Name) . }}{{ end }}`, "nats.y", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tf := parseTemplate("t.yaml", tc.text)
			if tf.err != nil || len(tf.refs) != 1 {
				t.Fatalf("refs %v, err %v", refs(tf), tf.err)
			}
			got, ok := tf.refs[0].resolve(ctx)
			if got != tc.want || ok != tc.ok {
				t.Errorf("resolve = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	// The regex scan of a file that does not parse never resolves a computed argument.
	tf := parseTemplate("bad.yaml", "{{ env \"X\" }}\n{{ include (printf \"%s.x\" .Chart.Name) . }}\n{{ lookup $gv \"A\" \"\" \"\" }}\n{{ if $gv | .Capabilities.APIVersions.Has }}{{ end }}\n{{ if \"a/v1\" | .Capabilities.APIVersions.Has }}{{ end }}")
	if got := refs(tf); !slices.Equal(got, []string{`include computed(include (printf "%s.x" .Chart.Name) .) :2`, `lookup computed(lookup $gv "A" "" "") :3`,
		`has computed(if $gv | .Capabilities.APIVersions.Has) :4`, `has "a/v1" :5`}) {
		t.Errorf("fallback refs %q", got)
	}
	if _, ok := tf.refs[0].resolve(ctx); ok {
		t.Error("a computed argument found by the regex scan resolved")
	}
}

func TestGroupOf(t *testing.T) {
	for in, want := range map[string]string{
		"v1": "", "v1/Pod": "", "apps/v1": "apps", "apps/v1/Deployment": "apps",
		"kubevirt.io/v1 VirtualMachine": "kubevirt.io", "cdi.kubevirt.io/v1beta1": "cdi.kubevirt.io",
	} {
		if got := groupOf(in); got != want {
			t.Errorf("groupOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCRDGroups(t *testing.T) {
	text := "apiVersion: v1\nkind: ConfigMap\ndata:\n  group: x.io\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  versions:\n    - schema:\n        properties:\n          group:\n            type: string\n  group: y.io\n"
	got := crdGroups("crds/a.yaml", text)
	if len(got) != 1 || got[0].group != "y.io" || got[0].line != 14 {
		t.Errorf("crdGroups = %+v", got)
	}
}

func TestChartMeta(t *testing.T) {
	c := newChart(map[string][]byte{
		"Chart.yaml":        []byte("apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n  - name: a\n    version: 1.0.0\n    repository: oci://x\n  - name: b\n    alias: bee\n"),
		"requirements.yaml": []byte("dependencies:\n- name: c\n  repository: file://../c\n"),
	}, "charts/app", "charts/app", false)
	var got []string
	for _, d := range c.deps {
		got = append(got, fmt.Sprintf("%s(%s) %s:%d", d.name, d.alias, d.file, d.line))
	}
	want := []string{"a() charts/app/Chart.yaml:7", "b(bee) charts/app/Chart.yaml:8", "c() charts/app/requirements.yaml:3"}
	if c.name != "app" || c.loadErr != nil || !slices.Equal(got, want) {
		t.Errorf("chart %s, deps %v (want %v), err %v", c.name, got, want, c.loadErr)
	}
	bad := newChart(map[string][]byte{"Chart.yaml": []byte("name: [\n")}, "x", "x", false)
	if bad.loadErr == nil {
		t.Error("a broken Chart.yaml must be reported")
	}
}
