package doctest

import (
	"os"
	"path/filepath"
	"testing"

	"cozystack.io/sdk/localcp"
)

// TestRootIsLocalcpRepoRoot: Root and sdk/localcp.RepoRoot, two copies of
// one rule (contracts may not import sdk), find the same directory: from a
// directory of this repository, and in a tree whose root holds go.work
// beside sdk/localcp/versions.yaml with another go.work (a workspace of its
// own, as a catalog author's) in between, which both pass over.
func TestRootIsLocalcpRepoRoot(t *testing.T) {
	tree := t.TempDir()
	for _, f := range []string{"go.work", "sdk/localcp/versions.yaml", "author/go.work"} {
		p := filepath.Join(tree, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nested := filepath.Join(tree, "author", "charts", "app")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dir  string
		want string // "" for the root found from the package directory
	}{
		{name: "this package's directory", dir: wd},
		{name: "below a foreign go.work", dir: nested, want: tree},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(tc.dir)
			got := Root(t)
			want, ok := localcp.RepoRoot()
			if !ok {
				t.Fatalf("localcp.RepoRoot found no root from %s; Root found %s", tc.dir, got)
			}
			if got != want {
				t.Errorf("from %s: Root = %s, localcp.RepoRoot = %s: the two copies of the rule differ", tc.dir, got, want)
			}
			if tc.want != "" && got != tc.want {
				t.Errorf("from %s: Root = %s, want %s (the go.work beside sdk/localcp/versions.yaml)", tc.dir, got, tc.want)
			}
		})
	}
}
