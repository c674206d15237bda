package goimports

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"cozystack.io/tools/internal/boundary/config"
)

func TestOwner(t *testing.T) {
	mods := []goModule{{"example.test/a", "a"}, {"example.test/a/b", "a/b"}, {"example.test/ab", "ab"}}
	for imp, want := range map[string]string{
		"example.test/a":       "a",
		"example.test/a/x":     "a",
		"example.test/a/b/c":   "a/b",
		"example.test/ab/c":    "ab",
		"example.test/abc":     "",
		"k8s.io/api/core/v1":   "",
		"example.test/a/bcd/e": "a",
	} {
		m, ok := owner(mods, imp)
		if ok != (want != "") || m.dir != want {
			t.Errorf("owner(%q) = %q, %v; want %q", imp, m.dir, ok, want)
		}
	}
}

func TestGoEnv(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod -buildvcs=false")
	t.Setenv("GOWORK", "off")
	env := goEnv("/r/go.work")
	if !slices.Contains(env, "GOFLAGS=-buildvcs=false") || !slices.Contains(env, "GOWORK=/r/go.work") || slices.Contains(env, "GOWORK=off") {
		t.Errorf("env: %v", env)
	}
}

// Without go.work every go.mod below the root is loaded on its own, and an
// import of a sibling module's package is still an edge.
func TestModulesWithoutWorkspace(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"a/go.mod":           "module example.test/a\n\ngo 1.26.0\n",
		"a/a.go":             "package a\n\n// A is a.\nconst A = 1\n",
		"b/go.mod":           "module example.test/b\n\ngo 1.26.0\n",
		"b/b.go":             "package b\n\nimport (\n\t\"fmt\"\n\n\t\"example.test/a\"\n)\n\nvar _ = fmt.Sprint(a.A)\n",
		"b/testdata/go.mod":  "module example.test/c\n\ngo 1.26.0\n",
		"b/testdata/c/c.go":  "package c\n\nimport \"example.test/a\"\n\nvar _ = a.A\n",
		"b/tagged_other.go":  "//go:build never\n\npackage b\n\nimport \"example.test/a/sub\"\n",
		"a/sub/sub.go":       "package sub\n",
		"b/internal/in.go":   "package internal\n",
		"b/internal/in_x.go": "package internal\n\nimport _ \"example.test/b\"\n",
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Infer(root)
	if err != nil {
		t.Fatal(err)
	}
	edges, err := Scan(root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range edges {
		got = append(got, fmt.Sprintf("%s→%s %s:%d %s", e.From, e.To, e.File, e.Line, e.Target))
	}
	slices.Sort(got)
	want := []string{"b→a b/b.go:6 example.test/a", "b→a b/tagged_other.go:5 example.test/a/sub"}
	if !slices.Equal(got, want) {
		t.Errorf("edges\n got %q\nwant %q", got, want)
	}
}
