package sdkcompat

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffCRDs: each directory of testdata/crd (but baseline/) holds a
// current.yaml, one change away from baseline/crds.yaml; want.golden
// beside it is every change DiffCRDs reports, with its verdict.
func TestDiffCRDs(t *testing.T) {
	old, err := LoadCRDs(filepath.Join("testdata", "crd", "baseline"), Group)
	if err != nil {
		t.Fatal(err)
	}
	if len(old) != 2 {
		t.Fatalf("the baseline has %d kinds, want 2", len(old))
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "crd"))
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "baseline" {
			continue
		}
		cases++
		t.Run(e.Name(), func(t *testing.T) {
			dir := filepath.Join("testdata", "crd", e.Name())
			cur, err := LoadCRDs(dir, Group)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, c := range DiffCRDs(old, cur) {
				verdict := "incompatible"
				if c.Compatible {
					verdict = "compatible"
				}
				fmt.Fprintf(&b, "%s\t%s\n", verdict, c)
			}
			golden(t, filepath.Join(dir, "want.golden"), b.String())
		})
	}
	if cases < 10 {
		t.Fatalf("only %d cases under testdata/crd", cases)
	}
}

// TestLoadCRDsErrors: a document that does not decode, and a kind defined
// twice, are errors naming the file.
func TestLoadCRDsErrors(t *testing.T) {
	for name, content := range map[string]string{
		"not YAML": "apiVersion: [\n",
		"strict":   "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: backups.cozystack.io\n  unknownField: 1\n",
		"defined twice": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: backups.cozystack.io\n  names: {kind: Plan}\n" +
			"---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: backups.cozystack.io\n  names: {kind: Plan}\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "x.yaml"), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadCRDs(dir, Group)
			if err == nil || !strings.Contains(err.Error(), "x.yaml") {
				t.Fatalf("got %v, want an error naming x.yaml", err)
			}
		})
	}
}
