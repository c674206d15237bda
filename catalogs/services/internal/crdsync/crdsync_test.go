package crdsync

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"

// fakeModule stands for the go command: one module directory with CRDs.
func fakeModule(t *testing.T) func(context.Context, string, string) (string, string, error) {
	dir := t.TempDir()
	bases := filepath.Join(dir, "config", "crd", "bases")
	if err := os.MkdirAll(bases, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.example.com_things.yaml", "a.example.com_others.yaml"} {
		if err := os.WriteFile(filepath.Join(bases, f), []byte(crd), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return func(context.Context, string, string) (string, string, error) { return dir, "v1.2.3", nil }
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveWriteCheck(t *testing.T) {
	mirror := t.TempDir()
	writeFile(t, filepath.Join(mirror, "b.yaml"), crd)
	sources := &Sources{Sources: []Source{
		{Chart: "charts/a", Module: "example.com/a", Files: []string{"config/crd/bases/*.yaml"}},
		{Chart: "charts/b", Mirror: "b.yaml", SHA256: digest([]byte(crd))},
	}}
	cat := t.TempDir()
	writeFile(t, filepath.Join(cat, "charts/a/crds/stale.yaml"), crd)
	files, skipped, err := Resolve(context.Background(), cat, sources, Options{Mirror: mirror, ModuleDir: fakeModule(t)})
	if err != nil || len(skipped) != 0 || len(files) != 3 {
		t.Fatalf("Resolve: %d files, skipped %v, %v", len(files), skipped, err)
	}
	if !strings.Contains(string(files[0].Content), "# Source: example.com/a@v1.2.3 config/crd/bases/") {
		t.Errorf("header of %s: %q", files[0].Path, strings.SplitN(string(files[0].Content), "\n", 2)[0])
	}
	if err := Check(cat, files); err == nil {
		t.Error("Check before Write passed")
	}
	if err := Write(cat, files); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cat, "charts/a/crds/stale.yaml")); !os.IsNotExist(err) {
		t.Errorf("a file no source gives survived Write: %v", err)
	}
	if err := Check(cat, files); err != nil {
		t.Errorf("Check after Write: %v", err)
	}
	writeFile(t, filepath.Join(cat, "charts/b/crds/b.yaml"), "edited")
	if err := Check(cat, files); err == nil || !strings.Contains(err.Error(), "differs from its source") {
		t.Errorf("Check of an edited file: %v", err)
	}

	// Without a mirror the mirror source is skipped, not guessed.
	_, skipped, err = Resolve(context.Background(), cat, sources, Options{ModuleDir: fakeModule(t)})
	if err != nil || len(skipped) != 1 {
		t.Errorf("Resolve without a mirror: skipped %v, %v", skipped, err)
	}
	// A mirror file with other content is refused.
	writeFile(t, filepath.Join(mirror, "b.yaml"), crd+"# changed\n")
	if _, _, err := Resolve(context.Background(), cat, sources, Options{Mirror: mirror, ModuleDir: fakeModule(t)}); err == nil || !strings.Contains(err.Error(), "pins") {
		t.Errorf("Resolve of a changed mirror file: %v", err)
	}
}

func TestLoadRejects(t *testing.T) {
	sha := strings.Repeat("a", 64)
	tests := []struct{ name, body, want string }{
		{"both", "sources:\n- {chart: charts/a, module: m, files: [x], mirror: f, sha256: " + sha + "}\n", "exactly one"},
		{"neither", "sources:\n- {chart: charts/a}\n", "exactly one"},
		{"module without files", "sources:\n- {chart: charts/a, module: m}\n", "needs files"},
		{"mirror without pin", "sources:\n- {chart: charts/a, mirror: f}\n", "64-digit sha256"},
		{"outside", "sources:\n- {chart: ../x, mirror: f, sha256: " + sha + "}\n", "inside the catalog"},
		{"unknown field", "sources:\n- {chart: charts/a, mirror: f, sha256: " + sha + ", version: v1}\n", "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, SourcesFile), tt.body)
			if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load: %v, want %q", err, tt.want)
			}
		})
	}
}
