package conformance_test

import (
	"context"
	"strings"
	"testing"

	"oras.land/oras-go/v2/content/memory"

	"cozystack.io/contracts/artifact/build"
	"cozystack.io/contracts/conformance"
)

// What conformance refuses with CAT-definitions and K5-pin, cozypkg build
// refuses with the same words (one rule, written once in
// contracts/artifact): a tenant role naming a plural the catalog does not
// serve, and cozy-lib taken from a file:// path.
func TestConformanceRefusesWhatBuildRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, rule string
		edits      []edit
	}{
		{"tenant role of another plural", "CAT-definitions", []edit{{File: "catalog.yaml", Replace: "    kind: Demo\n",
			With: "    kind: Demo\n    tenantRoles:\n      view:\n        - {apiGroups: [apps.cozystack.io], resources: [widgets], verbs: [get, list, watch]}\n"}}},
		{"cozy-lib by path", "K5-pin", []edit{{File: "charts/demo/Chart.yaml", Replace: "repository: oci://localhost:5000/cozystack/charts", With: "repository: file://../../../cozy-lib"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := seed(t, tc.edits, nil, nil)
			r, err := conformance.CheckDir(dir, conformance.Options{PlatformVersion: "0.1.0"})
			if err != nil {
				t.Fatal(err)
			}
			fs := findingsOf(r, tc.rule)
			if len(fs) != 1 {
				t.Fatalf("%d %s findings, want 1: %v", len(fs), tc.rule, r.Findings)
			}
			_, err = build.Build(context.Background(), dir, memory.New(), build.Options{})
			if err == nil || !strings.Contains(err.Error(), fs[0].Message) {
				t.Fatalf("build: %v; want an error saying %q", err, fs[0].Message)
			}
			t.Logf("conformance: %s\nbuild: %v", fs[0], err)
		})
	}
}
