package boundary

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cozystack.io/sdk/localcp"
	"cozystack.io/tools/internal/boundary/edge"
	"cozystack.io/tools/internal/boundary/report"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// found is what a test checks of an edge: the rule and where.
type found struct {
	Rule edge.Rule
	File string
	Line int
}

func (f found) String() string { return fmt.Sprintf("%s %s:%d", f.Rule, f.File, f.Line) }

// cases seed one violation each into testdata/tree: testdata/cases/<name>/bad
// is laid over a copy of the tree, and must give exactly these forbidden
// edges; testdata/cases/<name>/fixed, laid over another copy, must give none.
var cases = []struct {
	name string
	want []found
}{
	{"go-import", []found{{edge.GoImport, "catalogs/db/driver/peer.go", 4}}},
	{"go-import-test", []found{{edge.GoImport, "catalogs/vm/backup/server_test.go", 6}}},
	{"go-parse", []found{{edge.GoParse, "platform/server/broken.go", 5}}},
	{"helm-include", []found{{edge.HelmInclude, "catalogs/vm/charts/vm-instance/templates/db.yaml", 4}}},
	{"helm-include-undeclared", []found{{edge.HelmInclude, "catalogs/db/charts/redis/templates/redis.yaml", 5}}},
	{"unknown-include", []found{{edge.UnknownInclude, "catalogs/db/charts/postgres/templates/secret.yaml", 6}}},
	{"helm-lookup", []found{{edge.HelmLookup, "platform/charts/tenant/templates/databases.yaml", 2}}},
	{"helm-capabilities", []found{{edge.HelmCapabilities, "platform/charts/tenant/templates/quota.yaml", 7}}},
	// A file:// path into platform/: the dependency and the include through it.
	{"chart-dependency", []found{
		{edge.ChartDependency, "catalogs/vm/charts/vm-instance/Chart.yaml", 7},
		{edge.HelmInclude, "catalogs/vm/charts/vm-instance/templates/vm.yaml", 6},
	}},
	{"chart-dependency-range", []found{
		{edge.ChartDependency, "catalogs/vm/charts/vm-instance/Chart.yaml", 7},
		{edge.HelmInclude, "catalogs/vm/charts/vm-instance/templates/vm.yaml", 6},
	}},
	{"chart-dependency-name", []found{{edge.ChartDependency, "catalogs/vm/charts/vm-instance/Chart.yaml", 10}}},
	{"crd-kind", []found{{edge.CRDKind, "catalogs/vm/charts/vm-instance/templates/pg.yaml", 4}}},
	{"crd-kind-shipped", []found{{edge.CRDKind, "platform/charts/tenant/crds/clusters.yaml", 6}}},
	// A CRD shipped under files/ (applied by a hook) is found like one under crds/.
	{"crd-kind-files", []found{{edge.CRDKind, "platform/charts/tenant/files/crds/backups.yaml", 7}}},
	// Computed names and apiVersions that cannot be resolved are findings;
	// the fixed variants resolve (print $.Template.BasePath, printf of literals).
	{"dynamic-include", []found{{edge.DynamicInclude, "platform/charts/tenant/templates/config.yaml", 5}}},
	{"dynamic-lookup", []found{{edge.DynamicLookup, "platform/charts/tenant/templates/databases.yaml", 2}}},
	{"dynamic-capabilities", []found{{edge.DynamicCapabilities, "platform/charts/tenant/templates/quota.yaml", 7}}},
	// A dangling link in a chart; fixed, it links to a file of the same module.
	{"chart-symlink", []found{{edge.ChartSymlink, "catalogs/db/charts/postgres/templates/_shared.tpl", 0}}},
	// A subchart that is a symbolic link into platform's cozy-lib: the link
	// is the dependency (a file path, not the published chart), and the
	// include resolves through it. Fixed, a library of the same module is
	// linked and its include resolves without an edge.
	{"chart-dependency-symlink", []found{
		{edge.ChartDependency, "catalogs/vm/charts/vm-instance/charts/cozy-lib", 0},
		{edge.HelmInclude, "catalogs/vm/charts/vm-instance/templates/vm.yaml", 6},
	}},
	// An upstream chart vendored under the name of platform's chart "tenant"
	// is the catalog's own: including its helper is no edge, and its own
	// lookup is the catalog's (and found).
	{"vendored-name", []found{{edge.HelmLookup, "catalogs/db/charts/postgres/charts/tenant/templates/inventory.yaml", 1}}},
	// The regex scan of a file that does not parse still finds its lookup.
	{"template-parse", []found{
		{edge.TemplateParse, "catalogs/db/charts/postgres/templates/vms.yaml", 1},
		{edge.HelmLookup, "catalogs/db/charts/postgres/templates/vms.yaml", 2},
	}},
}

func TestSeededViolations(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bad := lint(t, "testdata/cases/"+tc.name+"/bad")
			if got := forbidden(bad); !slices.Equal(got, tc.want) {
				t.Errorf("bad: forbidden edges\n got %v\nwant %v", got, tc.want)
			}
			fixed := lint(t, "testdata/cases/"+tc.name+"/fixed")
			if got := forbidden(fixed); len(got) != 0 {
				t.Errorf("fixed: forbidden edges %v, want none", got)
			}
		})
	}
}

// Every rule has a seeded violation.
func TestEveryRuleSeeded(t *testing.T) {
	seeded := map[edge.Rule]bool{}
	for _, tc := range cases {
		for _, w := range tc.want {
			seeded[w.Rule] = true
		}
	}
	for _, r := range edge.Rules {
		if !seeded[r] {
			t.Errorf("rule %s has no seeded violation in cases", r)
		}
	}
}

// The summary's counts are those of the table's rows, for every fixture:
// each row's rule and status counted must give the summary's per-rule
// lines, and their sums the totals. Checked on every report a test makes.
func checkCounts(t *testing.T, r *report.Report) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.Write(&buf, report.Table, false); err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{} // "rule allowed" / "rule forbidden" → rows
	summary := map[string]int{}
	var edges, allowed, forbidden int
	lines := strings.Split(buf.String(), "\n")
	for i, line := range lines {
		f := strings.Fields(line)
		switch {
		case len(f) > 2 && (f[0] == "allowed" || f[0] == "FORBIDDEN"):
			rows[f[1]+" "+strings.ToLower(f[0])]++
		case strings.HasPrefix(line, "edges: "):
			if _, err := fmt.Sscanf(line, "edges: %d (allowed %d, forbidden %d)", &edges, &allowed, &forbidden); err != nil {
				t.Fatalf("summary line %q: %v", line, err)
			}
		case len(f) == 3 && i > 0 && slices.Contains(edge.Rules, edge.Rule(f[0])):
			var a, fb int
			fmt.Sscan(f[1], &a)
			fmt.Sscan(f[2], &fb)
			summary[f[0]+" allowed"], summary[f[0]+" forbidden"] = a, fb
		}
	}
	total := map[string]int{}
	for _, rule := range edge.Rules {
		for _, status := range []string{"allowed", "forbidden"} {
			k := string(rule) + " " + status
			if rows[k] != summary[k] {
				t.Errorf("%s: %d rows, summary says %d\n%s", k, rows[k], summary[k], buf.String())
			}
			total[status] += rows[k]
		}
	}
	if allowed != total["allowed"] || forbidden != total["forbidden"] || edges != allowed+forbidden || edges != len(r.Edges) {
		t.Errorf("summary edges %d (allowed %d, forbidden %d); rows: allowed %d, forbidden %d, edges %d", edges, allowed, forbidden,
			total["allowed"], total["forbidden"], len(r.Edges))
	}
	for _, e := range r.Edges {
		if e.Rule.Unresolved() && (e.To != "" || e.Allowed) {
			t.Errorf("%s finding with a target module or allowed: %+v", e.Rule, e)
		}
	}
}

// The clean tree's edges are all allowed, and are the ones expected: the
// published cozy-lib through oci:// and imports of the contracts.
func TestCleanTree(t *testing.T) {
	r, err := Run(Options{Root: "testdata/tree"})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, r)
	want := []string{
		"chart-dependency catalogs/db → platform catalogs/db/charts/postgres/Chart.yaml:7",
		"helm-include catalogs/db → platform catalogs/db/charts/postgres/templates/cluster.yaml:8",
		"go-import catalogs/db → contracts catalogs/db/driver/driver.go:4",
		"go-import catalogs/vm → contracts catalogs/vm/backup/backup.go:4",
		"chart-dependency catalogs/vm → platform catalogs/vm/charts/vm-instance/Chart.yaml:7",
		"helm-include catalogs/vm → platform catalogs/vm/charts/vm-instance/templates/vm.yaml:6",
		"crd-kind platform → contracts platform/charts/tenant/templates/namespace.yaml:9",
		"go-import platform → contracts platform/server/server.go:7",
	}
	var got []string
	for _, e := range r.Edges {
		if !e.Allowed {
			t.Errorf("forbidden: %+v", e)
		}
		got = append(got, fmt.Sprintf("%s %s → %s %s:%d", e.Rule, e.From, e.To, e.File, e.Line))
	}
	if !slices.Equal(got, want) {
		t.Errorf("edges\n got %q\nwant %q", got, want)
	}
}

// A vendored .tgz counts as the definition of its dependency: a helper only
// the archive defines resolves to the published chart, and without the
// archive it is an unknown-include.
func TestVendoredArchive(t *testing.T) {
	root := t.TempDir()
	copyTree(t, "testdata/tree", root)
	chart := filepath.Join(root, "catalogs/db/charts/postgres")
	write(t, filepath.Join(chart, "templates/archived.yaml"), "metadata:\n  labels: {{ include \"cozy-lib.archived\" . }}\n")
	run := func() *report.Report {
		r, err := Run(Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if got := forbidden(run()); !slices.Equal(got, []found{{edge.UnknownInclude, "catalogs/db/charts/postgres/templates/archived.yaml", 2}}) {
		t.Fatalf("without the archive: %v", got)
	}
	write(t, filepath.Join(chart, "charts/cozy-lib-1.0.0.tgz"), string(tgz(t, map[string]string{
		"cozy-lib/Chart.yaml":              "apiVersion: v2\nname: cozy-lib\ntype: library\nversion: 1.0.0\n",
		"cozy-lib/templates/_archived.tpl": "{{/* only in the archive */}}\n{{- define \"cozy-lib.archived\" -}}yes{{- end }}\n",
		"cozy-lib/templates/_labels.tpl":   "{{- define \"cozy-lib.labels\" -}}a: b{{- end }}\n",
	})))
	r := run()
	if got := forbidden(r); len(got) != 0 {
		t.Fatalf("with the archive: forbidden %v", got)
	}
	for _, e := range r.Edges {
		if e.File == "catalogs/db/charts/postgres/templates/archived.yaml" {
			if e.Rule != edge.HelmInclude || e.To != "platform" || !e.Allowed ||
				e.Definition != "catalogs/db/charts/postgres/charts/cozy-lib-1.0.0.tgz/templates/_archived.tpl:2" {
				t.Errorf("include through the archive: %+v", e)
			}
			return
		}
	}
	t.Error("no edge for the include of cozy-lib.archived")
}

// The golden files pin the table and JSON output: the tree with several
// violations at once, and a charts monorepo without configuration.
func TestGolden(t *testing.T) {
	root := t.TempDir()
	copyTree(t, "testdata/tree", root)
	seen := map[string]string{}
	for _, name := range []string{"go-import", "helm-include", "unknown-include", "helm-lookup", "helm-capabilities", "chart-dependency", "crd-kind", "template-parse"} {
		src := "testdata/cases/" + name + "/bad"
		filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(src, p)
				if prev, ok := seen[rel]; ok {
					t.Fatalf("cases %s and %s both write %s", prev, name, rel)
				}
				seen[rel] = name
			}
			return err
		})
		copyTree(t, src, root)
	}
	golden := func(name string, r *report.Report, root string) {
		for _, f := range []report.Format{report.Table, report.JSON} {
			var buf bytes.Buffer
			if err := r.Write(&buf, f, false); err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(buf.String(), root, "ROOT")
			file := filepath.Join("testdata/golden", name+"."+string(f))
			if *update {
				write(t, file, got)
				continue
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the output (go test -update rewrites it):\n%s", file, got)
			}
		}
	}
	r, err := Run(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	golden("violations", r, root)
	r, err = Run(Options{Root: "testdata/charts"})
	if err != nil {
		t.Fatal(err)
	}
	golden("charts", r, "testdata/charts")
	// Part of the work list of a split: each forbidden lookup and
	// Capabilities check with what the contracts offer instead.
	r, err = Run(Options{Root: "testdata/instead"})
	if err != nil {
		t.Fatal(err)
	}
	golden("instead", r, "testdata/instead")
}

// Each forbidden lookup and Capabilities check carries what the contracts
// offer instead (the built-in table, and the tree's own replacements
// entry); no other edge does, and the summary counts them.
func TestInstead(t *testing.T) {
	r, err := Run(Options{Root: "testdata/instead"})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, r)
	var got []string
	for _, e := range r.Edges {
		if e.Instead == nil {
			t.Errorf("no replacement on %s %s:%d", e.Rule, e.File, e.Line)
			continue
		}
		got = append(got, fmt.Sprintf("%d %s %s", e.Line, e.Target, e.Instead.Offer))
	}
	want := []string{
		"1 snapshot.storage.k8s.io/v1 K3 storage.snapshots",
		"2 linstor.linbit.com/v1 LinstorCluster K3 storage.replicated",
		"3 metallb.io/v1beta1 IPAddressPool K3 network.loadBalancer",
		"4 kubeovn.io/v1 Subnet K2 _cluster.ipv4-cluster-cidr, _cluster.ipv4-join-cidr",
		"5 gateway.networking.k8s.io/v1/Gateway K2 _cluster.gateway-api, _cluster.gateway-class-name",
		"7 postgresql.cnpg.io/v1 Cluster none yet",
		"8 acid.zalan.do/v1 postgresql none yet",
	}
	if !slices.Equal(got, want) {
		t.Errorf("replacements\n got %q\nwant %q", got, want)
	}
	if n := r.Edges[5].Instead.Note; !strings.Contains(n, "K7") {
		t.Errorf("the tree's own entry must win over the built-in table: note %q", n)
	}
	if i := r.Summary.Instead; i.Offered != 5 || i.NoneYet != 2 {
		t.Errorf("summary %+v", i)
	}
	// Allowed edges carry none.
	clean, err := Run(Options{Root: "testdata/tree"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range clean.Edges {
		if e.Instead != nil {
			t.Errorf("allowed edge with a replacement: %+v", e)
		}
	}
}

// Symbolic links are followed as Helm's loader follows them: a library
// vendored into charts by a link (even a link to a link) is a dependency
// of the charts on the library's module, its helpers resolve through it, a
// template linked from the library is an edge too, and the library's own
// files are scanned once. A link that dangles, loops or leaves the tree is
// a chart-symlink finding at the link.
func TestSymlinks(t *testing.T) {
	base := t.TempDir()
	copyTree(t, "testdata/links", base)
	root := filepath.Join(base, "tree")
	// Loops are made here, not committed: tools that follow links must not
	// meet them in the repository.
	for link, target := range map[string]string{
		"catalogs/a/charts/app/charts/self": "..",    // the chart holding the link
		"catalogs/a/loop1":                  "loop2", // a chain of links
		"catalogs/a/loop2":                  "loop1",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Run(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, r)
	var got []string
	for _, e := range r.Edges {
		status := "allowed"
		if !e.Allowed {
			status = "FORBIDDEN"
		}
		to := e.To
		if to == "" {
			to = "-"
		}
		got = append(got, fmt.Sprintf("%s %s %s → %s %s:%d %s", status, e.Rule, e.From, to, e.File, e.Line, e.Target))
	}
	want := []string{
		"allowed chart-dependency catalogs/a → library catalogs/a/charts/app/charts/lib:0 lib",
		"FORBIDDEN chart-symlink catalogs/a → - catalogs/a/charts/app/charts/self:0 ..",
		"allowed helm-include catalogs/a → library catalogs/a/charts/app/templates/deployment.yaml:5 lib.labels",
		"FORBIDDEN chart-symlink catalogs/a → - catalogs/a/loop1:0 loop2",
		"FORBIDDEN chart-symlink catalogs/a → - catalogs/a/loop2:0 loop1",
		"allowed chart-dependency catalogs/b → library catalogs/b/charts/web/charts/lib:0 lib",
		"FORBIDDEN chart-symlink catalogs/b → - catalogs/b/charts/web/charts/outside:0 ../../../../../../outside/lib",
		"allowed chart-dependency catalogs/b → library catalogs/b/charts/web/templates/_common.tpl:0 ../../../../../library/lib/templates/_labels.tpl",
		"FORBIDDEN chart-symlink catalogs/b → - catalogs/b/charts/web/templates/gone.yaml:0 missing.yaml",
	}
	if !slices.Equal(got, want) {
		t.Errorf("edges\n got %q\nwant %q", got, want)
	}
	reasons := map[string]string{}
	for _, e := range r.Edges {
		reasons[e.File] = e.Reason
	}
	for file, want := range map[string]string{
		"catalogs/a/charts/app/charts/self":               "loops: it links to \"..\", a directory that holds the link",
		"catalogs/a/loop1":                                "chain of links that never ends",
		"catalogs/b/charts/web/charts/outside":            "leaves the scanned tree",
		"catalogs/b/charts/web/templates/gone.yaml":       "dangling",
		"catalogs/b/charts/web/charts/lib":                "a symbolic link to library/lib",
		"catalogs/a/charts/app/templates/deployment.yaml": "",
	} {
		if !strings.Contains(reasons[file], want) {
			t.Errorf("%s: reason %q, want %q", file, reasons[file], want)
		}
	}
	for _, e := range r.Edges {
		if e.Rule == edge.HelmInclude && (e.Definition != "library/lib/templates/_labels.tpl:1" || e.Via == nil || e.Via.Repository != "file://../../../../../library/lib") {
			t.Errorf("include through the link: %+v %+v", e, e.Via)
		}
	}
	// Nothing is reported from the library's files more than once, nor
	// under the paths of the links that reach them.
	for _, e := range r.Edges {
		if strings.Contains(e.File, "charts/lib/") {
			t.Errorf("edge under a link: %+v", e)
		}
	}
}

// A vendored copy of another module's chart is that module's only when the
// configuration says so (publishedCharts, or vendoredCopies): then an
// include of its helpers is an edge to that module, and its own references
// are not the vendoring catalog's.
func TestVendoredCopies(t *testing.T) {
	root := t.TempDir()
	copyTree(t, "testdata/tree", root)
	copyTree(t, "testdata/cases/vendored-name/bad", root)
	config := filepath.Join(root, "boundaries.yaml")
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	write(t, config, string(data)+"vendoredCopies:\n  - {chart: tenant, module: platform, in: [\"catalogs/*\"]}\n")
	r, err := Run(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, r)
	// The copy is vendored without a Chart.yaml dependency: the directory
	// itself is the edge.
	want := []found{
		{edge.ChartDependency, "catalogs/db/charts/postgres/charts/tenant", 0},
		{edge.HelmInclude, "catalogs/db/charts/postgres/templates/tenant.yaml", 4},
	}
	if got := forbidden(r); !slices.Equal(got, want) {
		t.Errorf("forbidden edges\n got %v\nwant %v", got, want)
	}
	for _, e := range r.Forbidden() {
		if e.To != "platform" || e.Rule == edge.HelmInclude && e.Definition != "catalogs/db/charts/postgres/charts/tenant/templates/_helpers.tpl:1" {
			t.Errorf("edge to the copy: %+v", e)
		}
	}
	// Limited to other catalogs, the entry leaves this copy the catalog's.
	write(t, config, string(data)+"vendoredCopies:\n  - {chart: tenant, module: platform, in: [\"catalogs/vm\"]}\n")
	r, err = Run(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if got := forbidden(r); !slices.Equal(got, []found{{edge.HelmLookup, "catalogs/db/charts/postgres/charts/tenant/templates/inventory.yaml", 1}}) {
		t.Errorf("copy limited to catalogs/vm: forbidden %v", got)
	}
}

// A configuration whose module paths match nothing in the tree is a
// configuration error naming them, not a tree where every file falls in no
// module.
func TestWrongPaths(t *testing.T) {
	_, err := Run(Options{Root: "testdata/wrong-path"})
	var ce *ConfigError
	if !errorsAs(err, &ce) {
		t.Fatalf("error %v, want a ConfigError", err)
	}
	for _, want := range []string{"boundaries.yaml: module paths match nothing", "catalogs/db (path catalog/db: not found)", "catalogs/vm (path catalogs/vm: not found)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "platform") {
		t.Errorf("error %q names a module that exists", err)
	}
	// The repository's configuration on another tree: every path is named.
	_, err = Run(Options{Root: "testdata/charts", Config: filepath.Join(repoRoot(t), "boundaries.yaml")})
	if !errorsAs(err, &ce) || !strings.Contains(err.Error(), "catalogs/virtualization (path catalogs/virtualization: not found)") {
		t.Errorf("another tree's configuration: %v", err)
	}
}

// Any directory of charts can be linted without configuration: each
// top-level chart is a module, groups belong to the module shipping their
// CRD, and every edge is counted (and forbidden).
func TestInferredCharts(t *testing.T) {
	r, err := Run(Options{Root: "testdata/charts"})
	if err != nil {
		t.Fatal(err)
	}
	want := []found{
		{edge.ChartDependency, "web/Chart.yaml", 7},
		{edge.HelmInclude, "web/templates/deployment.yaml", 5},
		{edge.HelmInclude, "web/templates/deployment.yaml", 13},
		{edge.HelmCapabilities, "web/templates/deployment.yaml", 14},
		{edge.HelmLookup, "web/templates/deployment.yaml", 16},
		{edge.UnknownInclude, "web/templates/deployment.yaml", 19},
		// queue ships its CRD under files/: the group is still queue's.
		{edge.HelmLookup, "web/templates/queue.yaml", 1},
	}
	checkCounts(t, r)
	if got := forbidden(r); !slices.Equal(got, want) {
		t.Errorf("forbidden edges\n got %v\nwant %v", got, want)
	}
	if len(r.Modules) != 4 || r.Config != "(inferred)" {
		t.Errorf("modules %v, config %q", r.Modules, r.Config)
	}
}

func TestConfigErrors(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "boundaries.yaml"), "modules: [{name: a, path: a}]\nallow: [{from: a, to: [b]}]\n")
	_, err := Run(Options{Root: root})
	var ce *ConfigError
	if !errorsAs(err, &ce) || !strings.Contains(err.Error(), "no module is named b") {
		t.Errorf("bad allow: %v", err)
	}
	if _, err := Run(Options{Root: filepath.Join(root, "missing")}); !errorsAs(err, &ce) {
		t.Errorf("missing root: %v", err)
	}
	if _, err := Run(Options{Root: root, Infer: true, Config: "x.yaml"}); !errorsAs(err, &ce) {
		t.Errorf("--infer with --config: %v", err)
	}
}

// The repository itself has no forbidden edge, and is linted in well under
// 10 seconds (the figure is logged; a loaded machine must not fail it).
func TestRepository(t *testing.T) {
	root := repoRoot(t)
	start := time.Now()
	r, err := Run(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("linted %s in %v: %d edges, %d forbidden", root, time.Since(start).Round(time.Millisecond), r.Summary.Edges, r.Summary.Forbidden)
	if r.Config != "boundaries.yaml" {
		t.Errorf("config %q, want the repository's boundaries.yaml", r.Config)
	}
	for _, e := range r.Forbidden() {
		t.Errorf("forbidden: %s %s → %s at %s:%d (%s): %s", e.Rule, e.From, e.To, e.File, e.Line, e.Target, e.Reason)
	}
	if r.Summary.Edges == 0 {
		t.Error("no edge at all: the platform imports the contracts, so the scan is broken")
	}
}

// repoRoot is this repository's root (localcp.RepoRoot: the go.work next
// to sdk/localcp).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, ok := localcp.RepoRoot()
	if !ok {
		t.Fatal("no repository root above the test directory")
	}
	return root
}

// lint copies testdata/tree and an overlay into a temporary root and runs
// the linter there.
func lint(t *testing.T, overlay string) *report.Report {
	t.Helper()
	root := t.TempDir()
	copyTree(t, "testdata/tree", root)
	copyTree(t, overlay, root)
	r, err := Run(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, r)
	return r
}

func forbidden(r *report.Report) []found {
	var out []found
	for _, e := range r.Forbidden() {
		out = append(out, found{e.Rule, e.File, e.Line})
	}
	return out
}

// copyTree copies src over dst, symbolic links as links (relative ones keep
// pointing where they did inside the tree). A file named *.go.in lands as
// *.go: Go files that must not compile (or gofmt) live in testdata under
// that name.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			link := filepath.Join(dst, rel)
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				return err
			}
			os.Remove(link)
			return os.Symlink(target, link)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		write(t, filepath.Join(dst, strings.TrimSuffix(rel, ".in")), string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, file, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tgz packs files the way `helm package` does: one top directory named
// after the chart.
func tgz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
