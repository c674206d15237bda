package charttest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writeTree writes files (slash-separated paths to contents) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		err := os.MkdirAll(filepath.Dir(p), 0o755)
		if err == nil {
			err = os.WriteFile(p, []byte(body), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// demoChart writes a chart with a strict values schema that accepts the
// K2 values, and a ConfigMap holding a password and its digest.
func demoChart(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "demo")
	writeTree(t, dir, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
		"values.yaml": "size: 1\n",
		"values.schema.json": `{
  "type": "object", "additionalProperties": false,
  "properties": {
    "size": {"type": "integer"},
    "_cluster": {"type": "object"},
    "_namespace": {"type": "object"}
  }
}`,
		"templates/_helpers.tpl": `{{- define "demo.name" -}}{{ .Release.Name }}{{- end -}}`,
		"templates/empty.yaml":   "{{- if false }}\nnever: true\n{{- end }}\n",
		"templates/configmap.yaml": `{{- $p := randAlphaNum 32 }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "demo.name" . }}
  namespace: {{ .Release.Namespace }}
  annotations:
    checksum: {{ sha256sum $p }}
data:
  password: {{ $p }}
  host: {{ .Values._namespace.host }}
  size: "{{ .Values.size }}"
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "demo.name" . }}
`,
	})
	return dir
}

func TestRender(t *testing.T) {
	dir := demoChart(t)
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(c, "demo-a", WithK2(map[string]any{"size": 3}))
	if err != nil {
		t.Fatal(err)
	}
	want := `# Source: demo/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo-a
  namespace: tenant-test
  annotations:
    checksum: <sha256>
data:
  password: <generated>
  host: test.example.org
  size: "3"
---
apiVersion: v1
kind: Service
metadata:
  name: demo-a
`
	if got := Manifest(out); got != want {
		t.Errorf("Manifest:\n%s\nwant:\n%s", got, want)
	}
	objs, err := Objects(out)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
	}
	if !slices.Equal(kinds, []string{"ConfigMap/demo-a", "Service/demo-a"}) {
		t.Errorf("Objects: %v", kinds)
	}

	// The schema rejects an unknown key, naming it, as Helm does on install.
	fresh, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(fresh, "demo-b", WithUnknownKey(WithK2(nil), nil)); err == nil || !strings.Contains(err.Error(), UnknownKey) {
		t.Errorf("Render with an unknown key: %v, want an error naming %s", err, UnknownKey)
	}
}

func TestObjectsError(t *testing.T) {
	_, err := Objects(map[string]string{"demo/templates/a.yaml": "kind: [unclosed\n"})
	if err == nil || !strings.HasPrefix(err.Error(), "demo/templates/a.yaml: ") {
		t.Errorf("Objects of a bad document: %v, want an error naming the template", err)
	}
}

func TestValues(t *testing.T) {
	for _, data := range [][]byte{nil, []byte(""), []byte("# nothing\n")} {
		if m, err := ReadValues(data); err != nil || m == nil || len(m) != 0 {
			t.Errorf("ReadValues(%q) = %v, %v; want an empty map", data, m, err)
		}
	}
	if _, err := ReadValues([]byte("- a list\n")); err == nil {
		t.Error("ReadValues of a list passed")
	}
	spec := map[string]any{"size": 1}
	v := WithK2(spec)
	if len(spec) != 1 || v["size"] != 1 || v["_cluster"] == nil || v["_namespace"] == nil {
		t.Errorf("WithK2: %v (spec now %v)", v, spec)
	}
	v["_cluster"].(map[string]any)["root-host"] = "changed"
	if K2Values()["_cluster"].(map[string]any)["root-host"] != "example.org" {
		t.Error("K2Values shares its maps between calls")
	}
}

func TestWithoutReservedKeys(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"size": map[string]any{"type": "integer"}, "_cluster": map[string]any{}, "_namespace": map[string]any{}, "cozy-lib": map[string]any{},
	}}
	got, err := WithoutReservedKeys(schema)
	if err != nil {
		t.Fatal(err)
	}
	if props := got["properties"].(map[string]any); len(props) != 1 || props["size"] == nil {
		t.Errorf("WithoutReservedKeys: %v", props)
	}
	if len(schema["properties"].(map[string]any)) != 4 {
		t.Error("WithoutReservedKeys changed its argument")
	}
	delete(schema["properties"].(map[string]any), "cozy-lib")
	if _, err := WithoutReservedKeys(schema); err == nil || !strings.Contains(err.Error(), "cozy-lib") {
		t.Errorf("a schema without cozy-lib: %v", err)
	}
	if _, err := WithoutReservedKeys(map[string]any{"type": "object"}); err == nil {
		t.Error("a schema without properties passed")
	}
}

func crdYAML(name string) string {
	return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "\n"
}

func TestChartCRDs(t *testing.T) {
	chart := t.TempDir()
	writeTree(t, chart, map[string]string{
		"crds/b.yaml":    crdYAML("b.example.com") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: skipped\n",
		"crds/a.yaml":    "---\n" + crdYAML("a.example.com") + "---\n" + crdYAML("c.example.com"),
		"crds/notes.txt": "not a CRD file",
	})
	crds, err := ChartCRDs(chart)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"a.example.com", "c.example.com", "b.example.com"}) {
		t.Errorf("ChartCRDs: %v", names)
	}
	if crds, err := ChartCRDs(t.TempDir()); err != nil || len(crds) != 0 {
		t.Errorf("a chart without crds/: %v, %v", crds, err)
	}
	writeTree(t, chart, map[string]string{"crds/c.yaml": crdYAML("d.example.com") + "---\nkind: CustomResourceDefinition\nspec: [1]\n"})
	if _, err := ChartCRDs(chart); err == nil || !strings.Contains(err.Error(), "c.yaml: document 1") {
		t.Errorf("a bad document: %v, want one naming the file and document", err)
	}
}

func TestSelectCRDs(t *testing.T) {
	crd := func(name string) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	got := SelectCRDs(
		[]*apiextensionsv1.CustomResourceDefinition{crd("a"), crd("b")},
		[]*apiextensionsv1.CustomResourceDefinition{crd("b"), crd("d"), crd("c"), crd("a"), crd("d")},
	)
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"d", "c"}) {
		t.Errorf("SelectCRDs: %v, want [d c]", names)
	}
}
