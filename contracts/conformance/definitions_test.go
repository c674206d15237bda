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
		reason     string
		edits      []edit
	}{
		{
			name:   "tenant role of another plural",
			rule:   "CAT-definitions",
			reason: "a plural the catalog does not serve is refused by conformance and build with one message, written once in contracts/artifact",
			edits: []edit{{File: "catalog.yaml", Replace: "    kind: Demo\n",
				With: "    kind: Demo\n    tenantRoles:\n      view:\n        - {apiGroups: [apps.cozystack.io], resources: [widgets], verbs: [get, list, watch]}\n"}},
		},
		{
			name:   "cozy-lib by path",
			rule:   "K5-pin",
			reason: "cozy-lib from a file:// path is refused by conformance (K5-pin) and build with one message",
			edits:  []edit{{File: "charts/demo/Chart.yaml", Replace: "repository: oci://localhost:5000/cozystack/charts", With: "repository: file://../../../cozy-lib"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := seed(t, tc.edits, nil, nil)
			r, err := conformance.CheckDir(dir, conformance.Options{PlatformVersion: "0.1.0"})
			if err != nil {
				t.Fatal(err)
			}
			fs := findingsOf(r, tc.rule)
			if len(fs) != 1 {
				t.Fatalf("%s: %d %s findings, want 1 (%s): %v", tc.name, len(fs), tc.rule, tc.reason, r.Findings)
			}
			_, err = build.Build(context.Background(), dir, memory.New(), build.Options{})
			if err == nil || !strings.Contains(err.Error(), fs[0].Message) {
				t.Fatalf("%s: build: %v; want an error saying %q (%s)", tc.name, err, fs[0].Message, tc.reason)
			}
			t.Logf("conformance: %s\nbuild: %v", fs[0], err)
		})
	}
}
