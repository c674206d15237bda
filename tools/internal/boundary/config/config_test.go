package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cozystack.io/tools/internal/boundary/edge"
)

const sample = `
modules:
  - {name: platform, path: platform}
  - {name: contracts, path: contracts/}
  - {name: catalogs/db, path: catalogs/db}
  - {name: catalogs/db-extra, path: catalogs/db/extra}
allow:
  - {from: platform, to: [contracts]}
  - {from: "catalogs/*", to: [contracts]}
  - {from: contracts, to: [catalogs/db], files: ["*_test.go"]}
publishedCharts:
  - {name: cozy-lib, module: platform, consumers: ["catalogs/*"], repository: "oci://"}
apiGroups:
  catalogs/db: [postgresql.cnpg.io, "*.db.example.io"]
  contracts: [apps.example.io]
shared: ["", "*.k8s.io", "snapshot.db.example.io"]
exclude: [docs, "*.bak"]
`

func load(t *testing.T, text string) (*Config, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(file)
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"unknown key", "modules: []\nallowed: []\n", "field allowed not found"},
		{"empty name", "modules: [{name: '', path: a}]\n", "name \"\" is empty"},
		{"duplicate name", "modules: [{name: a, path: a}, {name: a, path: b}]\n", "module a is declared twice"},
		{"duplicate path", "modules: [{name: a, path: a}, {name: b, path: a/}]\n", "path \"a/\" is declared twice"},
		{"path outside", "modules: [{name: a, path: ../a}]\n", "must be relative and inside the root"},
		{"allow from nothing", "modules: [{name: a, path: a}]\nallow: [{from: 'b*', to: [a]}]\n", "matches no module"},
		{"allow to nothing", "modules: [{name: a, path: a}]\nallow: [{from: a, to: [b]}]\n", "no module is named b"},
		{"published file path", "modules: [{name: a, path: a}]\npublishedCharts: [{name: c, module: a, repository: 'file://x'}]\n", "published location"},
		{"published no module", "modules: [{name: a, path: a}]\npublishedCharts: [{name: c, module: b, repository: 'oci://'}]\n", "declared module"},
		{"groups of nobody", "modules: [{name: a, path: a}]\napiGroups: {b: [x.io]}\n", "no module is named b"},
		{"two owners", "modules: [{name: a, path: a}, {name: b, path: b}]\napiGroups: {a: [x.io], b: [x.io]}\n", "x.io is declared for both a and b"},
		{"owned and shared", "modules: [{name: a, path: a}]\napiGroups: {a: [x.io]}\nshared: [x.io]\n", "x.io is declared for both shared and a"},
		{"bad file pattern", "modules: [{name: a, path: a}]\nallow: [{from: a, to: [a], files: ['[']}]\n", "syntax error in pattern"},
		{"inner wildcard", "modules: [{name: a, path: a}]\napiGroups: {a: ['x.*.io']}\n", "only a leading"},
		{"copy of nobody", "modules: [{name: a, path: a}]\nvendoredCopies: [{chart: c, module: b}]\n", "needs a chart name and a declared module"},
		{"copy without a name", "modules: [{name: a, path: a}]\nvendoredCopies: [{module: a}]\n", "needs a chart name"},
		{"copy in nothing", "modules: [{name: a, path: a}]\nvendoredCopies: [{chart: c, module: a, in: ['b*']}]\n", "vendoredCopies.in: \"b*\" matches no module"},
		{"replacement without a group", "modules: [{name: a, path: a}]\nreplacements: [{k3: [x]}]\n", "replacements[0]: group is required"},
		{"replacement of another rule", "modules: [{name: a, path: a}]\nreplacements: [{group: x.io, rule: crd-kind}]\n", "want helm-lookup, helm-capabilities"},
		{"replacement unknown field", "modules: [{name: a, path: a}]\nreplacements: [{group: x.io, k4: [y]}]\n", "field k4 not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLookups(t *testing.T) {
	c, err := load(t, sample)
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{
		"platform/charts/x/Chart.yaml": "platform",
		"platform":                     "platform",
		"platformer/x.go":              RootModule,
		"contracts/api.go":             "contracts",
		"catalogs/db/x.go":             "catalogs/db",
		"catalogs/db/extra/y.go":       "catalogs/db-extra",
		"catalogs/db/extras/y.go":      "catalogs/db",
		"Makefile":                     RootModule,
	} {
		if got := c.ModuleOf(rel); got != want {
			t.Errorf("ModuleOf(%q) = %q, want %q", rel, got, want)
		}
	}
	for group, want := range map[string]struct {
		owner    string
		declared bool
	}{
		"postgresql.cnpg.io":     {"catalogs/db", true},
		"backups.db.example.io":  {"catalogs/db", true},
		"snapshot.db.example.io": {"", true}, // exact wins over the pattern
		"storage.k8s.io":         {"", true},
		"":                       {"", true},
		"monitoring.coreos.com":  {"", false},
		"db.example.io":          {"", false}, // "*.x" is subdomains only
	} {
		owner, declared := c.GroupOwner(group)
		if owner != want.owner || declared != want.declared {
			t.Errorf("GroupOwner(%q) = %q, %v; want %q, %v", group, owner, declared, want.owner, want.declared)
		}
	}
	if c.AddGroup("postgresql.cnpg.io", "platform") || !c.AddGroup("acid.zalan.do", "platform") {
		t.Error("AddGroup must add only undeclared groups")
	}
	if owner, _ := c.GroupOwner("acid.zalan.do"); owner != "platform" {
		t.Errorf("inferred owner %q", owner)
	}
	for rel, want := range map[string]bool{
		".git": true, "platform/testdata": true, "a/node_modules": true, "vendor": true,
		"docs": true, "x/file.bak": true, "platform/charts": false, ".": false,
	} {
		if got := c.Excluded(rel); got != want {
			t.Errorf("Excluded(%q) = %v", rel, got)
		}
	}
	for rel, want := range map[string]bool{
		"docs/x/a.go": true, "a/testdata/b/c.yaml": true, "platform/x/a.go": false, "a.go": false, "docs": false,
	} {
		if got := c.Skips(rel); got != want {
			t.Errorf("Skips(%q) = %v", rel, got)
		}
	}
}

func TestCopyOwner(t *testing.T) {
	c, err := load(t, sample+"vendoredCopies:\n  - {chart: common, module: platform, in: [\"catalogs/db\"]}\n  - {chart: base, module: contracts}\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ chart, in, want string }{
		{"cozy-lib", "catalogs/db", "platform"}, // a published chart
		{"cozy-lib", "platform", ""},            // its own module's
		{"common", "catalogs/db", "platform"},
		{"common", "catalogs/db-extra", ""}, // not in the entry's modules
		{"base", "catalogs/db-extra", "contracts"},
		{"redis", "catalogs/db", ""},
	} {
		if got := c.CopyOwner(tc.chart, tc.in); got != tc.want {
			t.Errorf("CopyOwner(%s, %s) = %q, want %q", tc.chart, tc.in, got, tc.want)
		}
	}
}

func TestCheckPaths(t *testing.T) {
	c, err := load(t, sample)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, d := range []string{"platform", "contracts", "catalogs/db/extra", "docs"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CheckPaths(root); err != nil {
		t.Errorf("every path exists: %v", err)
	}
	c.Modules = append(c.Modules, Module{Name: "tools", Path: "tool"}, Module{Name: "docs", Path: "docs"})
	err = c.CheckPaths(root)
	if err == nil || !strings.Contains(err.Error(), "tools (path tool: not found), docs (path docs: excluded from the scan)") {
		t.Errorf("error %v", err)
	}
}

func TestJudge(t *testing.T) {
	c, err := load(t, sample)
	if err != nil {
		t.Fatal(err)
	}
	oci := &edge.ChartRef{Name: "cozy-lib", Version: "1.2.3", Repository: "oci://ghcr.io/x"}
	for _, tc := range []struct {
		name    string
		e       edge.Edge
		allowed bool
		reason  string
	}{
		{"allowed module edge", edge.Edge{From: "platform", To: "contracts"}, true, "platform → contracts is allowed"},
		{"pattern", edge.Edge{From: "catalogs/db", To: "contracts"}, true, "is allowed"},
		{"reverse", edge.Edge{From: "contracts", To: "platform"}, false, "contracts → platform is not an allowed edge"},
		{"test-only edge from a test", edge.Edge{From: "contracts", To: "catalogs/db", File: "contracts/x/a_test.go"}, true, "is allowed"},
		{"test-only edge from other code", edge.Edge{From: "contracts", To: "catalogs/db", File: "contracts/x/a.go"}, false, "not an allowed edge"},
		{"catalog to platform", edge.Edge{From: "catalogs/db", To: "platform"}, false, "not an allowed edge"},
		{"published", edge.Edge{From: "catalogs/db", To: "platform", Via: oci}, true, "published chart cozy-lib 1.2.3"},
		{"published, v-prefixed", edge.Edge{From: "catalogs/db", To: "platform",
			Via: &edge.ChartRef{Name: "cozy-lib", Version: "v1.2.3-rc.1", Repository: "oci://x"}}, true, "published chart"},
		{"published by file path", edge.Edge{From: "catalogs/db", To: "platform",
			Via: &edge.ChartRef{Name: "cozy-lib", Version: "1.2.3", Repository: "file://../../platform"}}, false, "through oci://"},
		{"published with a range", edge.Edge{From: "catalogs/db", To: "platform",
			Via: &edge.ChartRef{Name: "cozy-lib", Version: "~1.2", Repository: "oci://x"}}, false, "pin one exact version"},
		{"published to a non-consumer", edge.Edge{From: "contracts", To: "platform", Via: oci}, false, "not an allowed edge"},
		{"another chart", edge.Edge{From: "catalogs/db", To: "platform",
			Via: &edge.ChartRef{Name: "tenant", Version: "1.0.0", Repository: "oci://x"}}, false, "not an allowed edge"},
		{"no target keeps its reason", edge.Edge{From: "catalogs/db", Reason: "no chart defines it"}, false, "no chart defines it"},
		{"scanner note first", edge.Edge{From: "catalogs/db", To: "platform", Reason: "note"}, false, "note; catalogs/db → platform"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.e
			c.Judge(&e)
			if e.Allowed != tc.allowed || !strings.Contains(e.Reason, tc.reason) {
				t.Errorf("Judge: allowed %v, reason %q; want %v, %q", e.Allowed, e.Reason, tc.allowed, tc.reason)
			}
		})
	}
}

func TestInfer(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"web", "db", ".git", "testdata"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Infer(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Modules) != 2 || c.Modules[0].Name != "db" || c.Modules[1].Name != "web" || c.Source() != "" {
		t.Errorf("modules %v", c.Modules)
	}
	// A chart at the root is one module.
	if err := os.WriteFile(filepath.Join(root, "Chart.yaml"), []byte("name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err = Infer(root); err != nil || len(c.Modules) != 1 || c.ModuleOf("web/templates/a.yaml") != filepath.Base(root) {
		t.Errorf("root chart: %v %v", c.Modules, err)
	}
}
