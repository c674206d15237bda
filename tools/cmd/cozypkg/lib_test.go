package main

import (
	"os"
	"path/filepath"
	"testing"

	"cozystack.io/tools/internal/chartlib"
)

// libFixture is a library chart tlib 1.0.0, its packaged archive and what
// depends on it.
type libFixture struct {
	dir     string // the library chart
	archive string // tlib-1.0.0.tgz, as cozypkg package writes it
	lib     *chartlib.Library
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newLibFixture(t *testing.T) libFixture {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tlib")
	writeFiles(t, dir, map[string]string{
		"Chart.yaml":             "apiVersion: v2\nname: tlib\nversion: 1.0.0\ntype: library\n",
		"templates/_helpers.tpl": `{{- define "tlib.name" -}}{{ .Chart.Name }}{{- end -}}` + "\n",
	})
	lib, err := chartlib.Package(dir)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), lib.FileName())
	if err := os.WriteFile(archive, lib.Archive, 0o644); err != nil {
		t.Fatal(err)
	}
	return libFixture{dir: dir, archive: archive, lib: lib}
}

// dependent writes an application chart that depends on tlib 1.0.0 from
// an OCI repository, as contract K5 wants.
func (l libFixture) dependent(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	writeFiles(t, dir, map[string]string{
		"Chart.yaml":               "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n  - name: tlib\n    version: 1.0.0\n    repository: oci://127.0.0.1:1/charts\n",
		"values.yaml":              "{}\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
	})
	return dir
}

// vendored is a dependent chart with tlib vendored in.
func (l libFixture) vendored(t *testing.T) string {
	t.Helper()
	dir := l.dependent(t)
	if err := chartlib.Vendor(dir, l.lib); err != nil {
		t.Fatal(err)
	}
	return dir
}
