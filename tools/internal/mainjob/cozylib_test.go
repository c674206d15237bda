package mainjob_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"cozystack.io/sdk/localcp"
	"cozystack.io/tools/internal/chartlib"
	"cozystack.io/tools/internal/mainjob"
)

// Every catalog chart names, as its cozy-lib dependency's repository, the
// address the main job publishes cozy-lib at on the local control plane
// (`make demo`: `cozystack-local up`'s fixed registry port), and so does
// the example of contracts/schemas/v1alpha1/k5-cozy-lib.md: nothing names
// an address where nothing is published.
func TestCatalogsPinWhereCozyLibIsPublished(t *testing.T) {
	root, ok := localcp.RepoRoot()
	if !ok {
		t.Fatal("run from inside the repository")
	}
	want := "oci://" + mainjob.ChartsRepository(fmt.Sprintf("127.0.0.1:%d", localcp.DefaultPorts().Registry))
	dirs, err := chartlib.FindDependents("cozy-lib", filepath.Join(root, "catalogs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 10 {
		t.Fatalf("%d catalog charts depend on cozy-lib, want every application chart of both catalogs", len(dirs))
	}
	for _, dir := range dirs {
		for _, file := range []string{"Chart.yaml", "Chart.lock"} {
			data, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Dependencies []struct{ Name, Repository string } `json:"dependencies"`
			}
			if err := yaml.Unmarshal(data, &doc); err != nil {
				t.Fatalf("%s/%s: %v", dir, file, err)
			}
			for _, d := range doc.Dependencies {
				if d.Name == "cozy-lib" && d.Repository != want {
					t.Errorf("%s/%s: cozy-lib from %s, want %s (make vendor-cozy-lib rewrites Chart.lock)", dir, file, d.Repository, want)
				}
			}
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "contracts", "schemas", "v1alpha1", "k5-cozy-lib.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "repository: "+want+"\n") || strings.Contains(string(doc), "localhost:5000") {
		t.Errorf("k5-cozy-lib.md's Chart.yaml example does not name repository %s", want)
	}
}
