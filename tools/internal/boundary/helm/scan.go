// Package helm finds the edges Helm charts make between modules:
//
//   - helm-include: include/template of a name another module's chart defines;
//   - unknown-include: include/template of a name no chart of the tree defines;
//   - helm-lookup, helm-capabilities: lookup and .Capabilities.APIVersions.Has
//     on an API group another module owns;
//   - crd-kind: `apiVersion: group/...` in template YAML, or a shipped
//     CustomResourceDefinition, for a group another module owns;
//   - chart-dependency: a Chart.yaml dependency on another module's chart
//     (a file:// path into it, or the name of a chart it owns or publishes);
//   - template-parse: a template that does not parse with Helm's functions.
//
// Templates are parsed with text/template/parse and walked as syntax trees;
// a regex scan stands in only for a file that does not parse, and that file
// gets a template-parse finding of its own.
//
// Include resolution follows Helm, where every template of a chart and of
// all its dependencies shares one namespace: a name is first looked for in
// the chart, its subcharts (directories and .tgz archives under charts/) and
// its dependencies found in the tree (file:// paths, or a chart of the same
// name); a vendored copy of a chart another module owns counts as that
// module's. Only then is the rest of the tree searched.
package helm

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"cozystack.io/tools/internal/boundary/config"
	"cozystack.io/tools/internal/boundary/edge"
)

// Scan walks root (skipping what cfg excludes) and returns the Helm edges
// with From and To set, not yet judged. When cfg was inferred (no
// boundaries.yaml), each API group whose CRD exactly one module ships
// becomes that module's first. It fails only when the tree cannot be walked.
func Scan(root string, cfg *config.Config) ([]edge.Edge, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	s := &scanner{root: absRoot, cfg: cfg, byDir: map[string]*chart{}, nameOwner: map[string]string{}, topByName: map[string]*chart{}}
	if err := s.discover(absRoot); err != nil {
		return nil, err
	}
	s.assignOwners()
	if cfg.Source() == "" {
		s.inferGroups()
	}
	s.indexDefinitions()
	for _, c := range s.all {
		if c.ours() {
			s.chartEdges(c)
		}
	}
	return s.edges, nil
}

type scanner struct {
	root      string
	cfg       *config.Config
	all       []*chart          // every chart, parents before their subcharts
	tops      []*chart          // charts that are no other chart's subchart
	byDir     map[string]*chart // directory charts by slash path
	nameOwner map[string]string // chart name → owning module ("" when ambiguous)
	topByName map[string]*chart // chart name → its one top-level chart, for name-resolved dependencies
	global    map[string][]definition
	families  map[*chart]*family
	edges     []edge.Edge
}

// definition is where a template name is defined, as one chart sees it.
type definition struct {
	owner string
	via   *dependency // the dependency it is reached through, if any
	file  string
	line  int
}

// family is everything Helm loads with one top-level chart.
type family struct {
	defs       map[string][]definition
	unresolved []string // dependencies found neither vendored nor in the tree
}

func (s *scanner) discover(absRoot string) error {
	return filepath.WalkDir(absRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(absRoot, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		} else if s.cfg.Excluded(rel) {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(p, "Chart.yaml")); err != nil {
			return nil
		}
		files, err := readChartDir(p)
		if err != nil {
			return err
		}
		c := newChart(files, rel, rel, false)
		if c.name == "" || c.name == "." {
			c.name = path.Base(absRoot)
		}
		c.module = s.cfg.ModuleOf(rel)
		if parentDir := path.Dir(rel); rel != "" && path.Base(parentDir) == "charts" && s.byDir[cleanDir(path.Dir(parentDir))] != nil {
			s.byDir[cleanDir(path.Dir(parentDir))].addSub(c)
		} else {
			s.tops = append(s.tops, c)
		}
		s.byDir[rel] = c
		s.add(c)
		// Vendored archives under charts/.
		entries, _ := os.ReadDir(filepath.Join(p, "charts"))
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".tgz") {
				label := join(rel, "charts/"+e.Name())
				data, err := os.ReadFile(filepath.Join(p, "charts", e.Name()))
				var a *chart
				if err != nil {
					a = &chart{dir: label, chartFile: label, archive: true, name: strings.TrimSuffix(e.Name(), ".tgz"), loadErr: err}
				} else {
					a = archiveChart(data, label)
				}
				c.addSub(a)
				s.addTree(a, s.cfg.ModuleOf(label))
			}
		}
		return nil
	})
}

func cleanDir(d string) string {
	if d == "." {
		return ""
	}
	return d
}

func (s *scanner) add(c *chart) { s.all = append(s.all, c) }

// addTree adds an archive chart and the subcharts inside it.
func (s *scanner) addTree(c *chart, module string) {
	c.module = module
	s.add(c)
	for _, sub := range c.subs {
		s.addTree(sub, module)
	}
}

// assignOwners decides who owns each chart name (a published chart's
// declared module, else the module of the one top-level chart of that
// name) and so which subcharts are vendored copies of another module's chart.
func (s *scanner) assignOwners() {
	for _, c := range s.tops {
		c.owner = c.module
		if prev, seen := s.nameOwner[c.name]; seen && prev != c.module {
			s.nameOwner[c.name] = ""
			delete(s.topByName, c.name)
			continue
		} else if seen {
			continue
		}
		s.nameOwner[c.name] = c.module
		s.topByName[c.name] = c
	}
	for _, p := range s.cfg.PublishedCharts {
		s.nameOwner[p.Name] = p.Module
	}
	for _, c := range s.all {
		if c.parent == nil {
			continue
		}
		owner := s.nameOwner[c.name]
		switch {
		case owner != "":
			c.owner = owner
		case !c.parent.ours():
			c.owner = c.parent.owner
		default:
			c.owner = c.module
		}
	}
}

// inferGroups makes each module the owner of the API groups of the CRDs it
// alone ships, for a tree without configuration.
func (s *scanner) inferGroups() {
	shippers := map[string]map[string]bool{}
	for _, c := range s.all {
		if !c.ours() {
			continue
		}
		for _, g := range c.crds {
			if shippers[g.group] == nil {
				shippers[g.group] = map[string]bool{}
			}
			shippers[g.group][c.module] = true
		}
	}
	groups := make([]string, 0, len(shippers))
	for g := range shippers {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		if len(shippers[g]) == 1 {
			for m := range shippers[g] {
				s.cfg.AddGroup(g, m)
			}
		}
	}
}

// indexDefinitions builds the tree-wide index of defined names.
func (s *scanner) indexDefinitions() {
	s.global = map[string][]definition{}
	s.families = map[*chart]*family{}
	for _, c := range s.all {
		for _, f := range c.files {
			for _, d := range f.defines {
				s.global[d.name] = append(s.global[d.name], definition{owner: c.owner, file: f.rel, line: d.line})
			}
		}
	}
}

// familyOf returns (building it once) what Helm loads with top: the chart,
// its subcharts, and the dependencies the tree holds, each definition with
// the module that owns it and the dependency it comes through.
func (s *scanner) familyOf(top *chart) *family {
	if f, ok := s.families[top]; ok {
		return f
	}
	f := &family{defs: map[string][]definition{}}
	seen := map[*chart]bool{}
	var add func(c *chart, owner string, via *dependency)
	add = func(c *chart, owner string, via *dependency) {
		if seen[c] {
			return
		}
		seen[c] = true
		if !c.ours() {
			owner = c.owner
		}
		for _, file := range c.files {
			for _, d := range file.defines {
				f.defs[d.name] = append(f.defs[d.name], definition{owner: owner, via: via, file: file.rel, line: d.line})
			}
			// Helm also names each file's template by its path in the chart tree.
			name := c.helmPath() + "/" + file.inner
			f.defs[name] = append(f.defs[name], definition{owner: owner, via: via, file: file.rel, line: 1})
		}
		for _, sub := range c.subs {
			subVia := via
			if subVia == nil {
				subVia = c.dependencyFor(sub.name)
			}
			subOwner := owner
			if !sub.ours() {
				subOwner = sub.owner
			}
			add(sub, subOwner, subVia)
		}
		for i, d := range c.deps {
			if c.hasSub(d) {
				continue
			}
			dep := &c.deps[i]
			if via != nil {
				dep = via
			}
			if target := s.resolve(c, d); target != nil {
				add(target, target.owner, dep)
			} else {
				f.unresolved = append(f.unresolved, d.name)
			}
		}
	}
	add(top, top.owner, nil)
	s.families[top] = f
	return f
}

// resolve finds the chart a dependency that is not vendored points at in
// the tree: the directory of a file:// path, or the one top-level chart of
// that name.
func (s *scanner) resolve(c *chart, d dependency) *chart {
	if p, ok := strings.CutPrefix(d.repository, "file://"); ok {
		if c.archive {
			return nil
		}
		return s.byDir[cleanDir(path.Join(c.dir, p))]
	}
	return s.topByName[d.name]
}

// chartEdges records the edges of one chart whose files are its module's own.
func (s *scanner) chartEdges(c *chart) {
	if c.loadErr != nil {
		s.edges = append(s.edges, edge.Edge{Rule: edge.ChartDependency, From: c.module, File: c.chartFile, Line: 1,
			Target: c.name, Reason: "dependencies unknown: " + c.loadErr.Error()})
	}
	for _, d := range c.deps {
		s.dependencyEdge(c, d)
	}
	fam := s.familyOf(c.top())
	for _, f := range c.files {
		if f.err != nil {
			s.edges = append(s.edges, edge.Edge{Rule: edge.TemplateParse, From: c.module, File: f.rel, Line: f.errLine,
				Target: f.rel, Reason: "does not parse with Helm's functions (its edges were found by a regex scan): " + f.err.Error()})
		}
		for _, r := range f.refs {
			if r.kind == refInclude {
				s.includeEdge(c, fam, f, r)
				continue
			}
			owner, _ := s.cfg.GroupOwner(groupOf(r.value))
			if owner == "" || owner == c.module {
				continue
			}
			rule := map[refKind]edge.Rule{refLookup: edge.HelmLookup, refCapabilities: edge.HelmCapabilities, refAPIVersion: edge.CRDKind}[r.kind]
			s.edges = append(s.edges, edge.Edge{Rule: rule, From: c.module, To: owner, File: f.rel, Line: r.line, Target: r.value})
		}
	}
	for _, g := range c.crds {
		if owner, _ := s.cfg.GroupOwner(g.group); owner != "" && owner != c.module {
			s.edges = append(s.edges, edge.Edge{Rule: edge.CRDKind, From: c.module, To: owner, File: g.file, Line: g.line,
				Target: g.group + " CustomResourceDefinition"})
		}
	}
}

func (s *scanner) dependencyEdge(c *chart, d dependency) {
	e := edge.Edge{Rule: edge.ChartDependency, From: c.module, File: d.file, Line: d.line, Target: d.name, Via: chartRef(&d)}
	if p, ok := strings.CutPrefix(d.repository, "file://"); ok {
		if c.archive {
			return // a packaged chart's file:// was resolved when it was packaged
		}
		target := path.Join(c.dir, p)
		if path.IsAbs(p) || target == ".." || strings.HasPrefix(target, "../") {
			e.Reason = "file:// path leads outside the scanned tree: " + d.repository
			s.edges = append(s.edges, e)
			return
		}
		if st, err := os.Stat(filepath.Join(s.root, filepath.FromSlash(target))); err != nil || !st.IsDir() {
			if c.hasSub(d) {
				return // vendored under charts/, so Helm never follows the path
			}
			e.Reason = "file:// path leads to no directory of the tree: " + d.repository
			s.edges = append(s.edges, e)
			return
		}
		e.To = s.cfg.ModuleOf(target)
		e.Definition = cleanDir(target)
	} else {
		e.To = s.nameOwner[d.name]
		if top := s.topByName[d.name]; top != nil {
			e.Definition = top.chartFile
		}
	}
	if e.To != "" && e.To != c.module {
		s.edges = append(s.edges, e)
	}
}

// includeEdge resolves one include/template name as Helm would for c.
func (s *scanner) includeEdge(c *chart, fam *family, f *templateFile, r ref) {
	e := edge.Edge{Rule: edge.HelmInclude, From: c.module, File: f.rel, Line: r.line, Target: r.value}
	defs := fam.defs[r.value]
	if len(defs) == 0 {
		defs = s.global[r.value]
		if len(defs) > 0 {
			e.Reason = "defined in no chart this one depends on"
		}
	}
	if len(defs) == 0 {
		e.Rule = edge.UnknownInclude
		e.Reason = "no chart in the tree defines it"
		if len(fam.unresolved) > 0 {
			e.Reason += " (dependencies not vendored nor in the tree: " + strings.Join(fam.unresolved, ", ") + ")"
		}
		s.edges = append(s.edges, e)
		return
	}
	for _, d := range defs {
		if d.owner == c.module {
			return
		}
	}
	d := defs[0]
	e.To, e.Via = d.owner, chartRef(d.via)
	e.Definition = d.file + ":" + strconv.Itoa(d.line)
	s.edges = append(s.edges, e)
}

func chartRef(d *dependency) *edge.ChartRef {
	if d == nil {
		return nil
	}
	return &edge.ChartRef{Name: d.name, Version: d.version, Repository: d.repository}
}
