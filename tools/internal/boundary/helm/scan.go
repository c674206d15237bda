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

// Scan walks root (skipping what cfg excludes, following symbolic links as
// Helm's loader does) and returns the Helm edges with From and To set, not
// yet judged, and the chart-symlink findings. When cfg was inferred (no
// boundaries.yaml), each API group whose CRD exactly one module ships
// becomes that module's first. It fails only when the tree cannot be read.
func Scan(root string, cfg *config.Config) ([]edge.Edge, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return nil, err
	}
	s := &scanner{root: absRoot, realRoot: realRoot, cfg: cfg, byDir: map[string]*chart{}, byReal: map[string][]*chart{},
		parsed: map[string]*chart{}, archives: map[string]*chart{}, links: map[string]bool{},
		nameOwner: map[string]string{}, topByName: map[string]*chart{}}
	if err := s.discover(); err != nil {
		return nil, err
	}
	s.chooseDups()
	s.assignOwners()
	if cfg.Source() == "" {
		s.inferGroups()
	}
	s.indexDefinitions()
	for _, c := range s.all {
		if c.ours() && !c.dup {
			s.chartEdges(c)
		}
	}
	return s.edges, nil
}

type scanner struct {
	root      string // absolute
	realRoot  string // root with symbolic links resolved
	cfg       *config.Config
	all       []*chart            // every chart, parents before their subcharts
	tops      []*chart            // charts that are no other chart's subchart, dups left out
	byDir     map[string]*chart   // directory charts by logical slash path
	byReal    map[string][]*chart // charts by where their files lie: one chart and its dups
	parsed    map[string]*chart   // directory charts read so far, by real path
	archives  map[string]*chart   // archives read so far, by real path
	links     map[string]bool     // symbolic links reported
	nameOwner map[string]string   // chart name → owning module ("" when ambiguous)
	topByName map[string]*chart   // chart name → its one top-level chart, for name-resolved dependencies
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

// discover walks the tree and builds a chart for every directory holding
// Chart.yaml (once per path it is reached by) and every archive under a
// chart's charts/.
func (s *scanner) discover() error {
	return s.walkTree("", []step{{real: s.realRoot}}, func(rel string, stack []step) error {
		if _, err := os.Stat(filepath.Join(stack[len(stack)-1].real, "Chart.yaml")); err != nil {
			return nil
		}
		return s.chartAt(rel, stack)
	})
}

// chartAt adds the chart of the directory at logical path rel, the last
// step of stack.
func (s *scanner) chartAt(rel string, stack []step) error {
	realAbs := stack[len(stack)-1].real
	real := s.realRel(realAbs)
	parsed, ok := s.parsed[real]
	if !ok {
		files, foreign, err := s.readFiles(stack)
		if err != nil {
			return err
		}
		parsed = newChart(files, real, real, false)
		parsed.foreign = foreign
		if parsed.name == "" || parsed.name == "." {
			parsed.name = filepath.Base(realAbs)
		}
		s.parsed[real] = parsed
	}
	c := parsed.clone()
	c.dir = rel
	for _, st := range stack {
		c.viaLink = c.viaLink || st.link != nil
	}
	parentDir := path.Dir(rel)
	if parent := s.byDir[cleanDir(path.Dir(parentDir))]; rel != "" && path.Base(parentDir) == "charts" && parent != nil {
		parent.addSub(c)
		// A link between the parent and this chart (charts/x, or charts
		// itself) makes this a dependency on wherever the link leads.
		link := stack[len(stack)-1].link
		if link == nil && len(stack) > 1 {
			link = stack[len(stack)-2].link
		}
		if link != nil {
			c.link = &dependency{name: c.name, repository: "file://" + link.text, file: link.at}
		}
	}
	s.byDir[rel] = c
	s.addTree(c, s.cfg.ModuleOf(real))
	s.addArchives(c, stack)
	return nil
}

// addArchives adds the .tgz archives under the charts/ directory of c
// (links to archives followed) as its subcharts.
func (s *scanner) addArchives(c *chart, stack []step) {
	chartsDir, err := filepath.EvalSymlinks(filepath.Join(stack[len(stack)-1].real, "charts"))
	if err != nil || !inside(s.realRoot, chartsDir) {
		return // no charts/, or a link the walk reports
	}
	entries, _ := os.ReadDir(chartsDir)
	inner := append(stack[:len(stack):len(stack)], step{real: chartsDir})
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tgz") || e.IsDir() {
			continue
		}
		abs, viaLink := filepath.Join(chartsDir, e.Name()), c.viaLink
		if e.Type()&fs.ModeSymlink != 0 {
			target, isDir, ok := s.follow(abs, inner, func(bool) bool { return true })
			if !ok || isDir {
				continue
			}
			abs, viaLink = target, true
		}
		label := s.realRel(abs)
		parsed, ok := s.archives[label]
		if !ok {
			data, err := os.ReadFile(abs)
			if err != nil {
				parsed = &chart{dir: label, real: label, chartFile: label, archive: true, name: strings.TrimSuffix(e.Name(), ".tgz"), loadErr: err}
			} else {
				parsed = archiveChart(data, label)
			}
			s.archives[label] = parsed
		}
		a := parsed.clone()
		setViaLink(a, viaLink)
		c.addSub(a)
		s.addTree(a, s.cfg.ModuleOf(label))
	}
}

func setViaLink(c *chart, v bool) {
	c.viaLink = v
	for _, sub := range c.subs {
		setViaLink(sub, v)
	}
}

func cleanDir(d string) string {
	if d == "." {
		return ""
	}
	return d
}

// addTree adds a chart and, for an archive, the subcharts inside it.
func (s *scanner) addTree(c *chart, module string) {
	c.module = module
	s.all = append(s.all, c)
	s.byReal[c.real] = append(s.byReal[c.real], c)
	for _, sub := range c.subs {
		s.addTree(sub, module)
	}
}

// chooseDups keeps, of the charts that share their files, the one reached
// without a symbolic link (else the first found) and marks the others as
// dups; the charts that are no subchart and no dup are the tops.
func (s *scanner) chooseDups() {
	for _, c := range s.all {
		group := s.byReal[c.real]
		if len(group) > 1 && group[0] == c {
			keep := group[0]
			for _, g := range group {
				if !g.viaLink {
					keep = g
					break
				}
			}
			for _, g := range group {
				g.dup = g != keep
			}
		}
		if c.parent == nil && !c.dup {
			s.tops = append(s.tops, c)
		}
	}
}

// assignOwners decides who owns each chart: the module its files lie in,
// except a vendored chart that is a copy of another module's chart (a
// published chart, or a vendoredCopies entry), and the subcharts inside such
// a copy. It also records who owns each chart name, for dependencies
// resolved by name.
func (s *scanner) assignOwners() {
	for _, c := range s.tops {
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
		c.owner = c.module
		if c.parent == nil {
			continue
		}
		if copyOf := s.cfg.CopyOwner(c.name, c.module); copyOf != "" {
			c.owner = copyOf
		} else if !c.parent.ours() && c.parent.module == c.module {
			c.owner = c.parent.owner
		}
	}
}

// inferGroups makes each module the owner of the API groups of the CRDs it
// alone ships, for a tree without configuration.
func (s *scanner) inferGroups() {
	shippers := map[string]map[string]bool{}
	for _, c := range s.all {
		if !c.ours() || c.dup {
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
		if c.dup {
			continue
		}
		for _, f := range c.files {
			for _, d := range f.defines {
				s.global[d.name] = append(s.global[d.name], definition{owner: c.owner, file: f.rel, line: d.line})
			}
		}
	}
}

// familyOf returns (building it once) what Helm loads with top: the chart,
// its subcharts (linked ones included), and the dependencies the tree
// holds, each definition with the module that owns it and the dependency it
// comes through.
func (s *scanner) familyOf(top *chart) *family {
	if f, ok := s.families[top]; ok {
		return f
	}
	f := &family{defs: map[string][]definition{}}
	seen := map[*chart]bool{}
	var add func(c *chart, via *dependency)
	add = func(c *chart, via *dependency) {
		if seen[c] {
			return
		}
		seen[c] = true
		for _, file := range c.files {
			for _, d := range file.defines {
				f.defs[d.name] = append(f.defs[d.name], definition{owner: c.owner, via: via, file: file.rel, line: d.line})
			}
			// Helm also names each file's template by its path in the chart tree.
			name := c.helmPath() + "/" + file.inner
			f.defs[name] = append(f.defs[name], definition{owner: c.owner, via: via, file: file.rel, line: 1})
		}
		for _, sub := range c.subs {
			subVia := via
			if subVia == nil {
				subVia = sub.link
			}
			if subVia == nil {
				subVia = c.dependencyFor(sub.name)
			}
			add(sub, subVia)
		}
		for i, d := range c.deps {
			if c.subFor(d) != nil {
				continue
			}
			dep := &c.deps[i]
			if via != nil {
				dep = via
			}
			if target := s.resolve(c, d); target != nil {
				add(target, dep)
			} else {
				f.unresolved = append(f.unresolved, d.name)
			}
		}
	}
	add(top, nil)
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
	for _, sub := range c.subs {
		s.subchartEdge(c, sub)
	}
	for _, l := range c.foreign {
		s.edges = append(s.edges, edge.Edge{Rule: edge.ChartDependency, From: c.module, To: s.cfg.ModuleOf(l.real), File: l.at,
			Target: l.text, Definition: l.real, Reason: "a symbolic link in chart " + c.name + " to " + l.real + ", which Helm loads as the chart's own " + l.logical})
	}
	fam := s.familyOf(c.top())
	ctx := evalContext{chartName: c.name, basePath: c.helmPath() + "/templates"}
	for _, f := range c.files {
		if f.err != nil {
			s.edges = append(s.edges, edge.Edge{Rule: edge.TemplateParse, From: c.module, File: f.rel, Line: f.errLine,
				Target: f.rel, Reason: "does not parse with Helm's functions (its edges were found by a regex scan): " + f.err.Error()})
		}
		for _, r := range f.refs {
			value, ok := r.resolve(ctx)
			if !ok {
				s.edges = append(s.edges, edge.Edge{Rule: dynamicRules[r.kind], From: c.module, File: f.rel, Line: r.line,
					Target: r.text, Reason: "not resolved: " + dynamicReasons[r.kind] + " is computed when the chart renders; check by hand where it points"})
				continue
			}
			if r.kind == refInclude {
				s.includeEdge(c, fam, f, r.line, value)
				continue
			}
			owner, _ := s.cfg.GroupOwner(groupOf(value))
			if owner == "" || owner == c.module {
				continue
			}
			s.edges = append(s.edges, edge.Edge{Rule: staticRules[r.kind], From: c.module, To: owner, File: f.rel, Line: r.line, Target: value})
		}
	}
	for _, g := range c.crds {
		if owner, _ := s.cfg.GroupOwner(g.group); owner != "" && owner != c.module {
			s.edges = append(s.edges, edge.Edge{Rule: edge.CRDKind, From: c.module, To: owner, File: g.file, Line: g.line,
				Target: g.group + " CustomResourceDefinition"})
		}
	}
}

var (
	staticRules    = map[refKind]edge.Rule{refLookup: edge.HelmLookup, refCapabilities: edge.HelmCapabilities, refAPIVersion: edge.CRDKind}
	dynamicRules   = map[refKind]edge.Rule{refInclude: edge.DynamicInclude, refLookup: edge.DynamicLookup, refCapabilities: edge.DynamicCapabilities}
	dynamicReasons = map[refKind]string{refInclude: "the template name", refLookup: "the apiVersion", refCapabilities: "the apiVersion"}
)

func (s *scanner) dependencyEdge(c *chart, d dependency) {
	e := edge.Edge{Rule: edge.ChartDependency, From: c.module, File: d.file, Line: d.line, Target: d.name, Via: chartRef(&d)}
	sub := c.subFor(d)
	if sub != nil && sub.link != nil {
		return // the link is what Helm loads: subchartEdge reports it
	}
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
		abs := filepath.Join(s.root, filepath.FromSlash(target))
		real, err := filepath.EvalSymlinks(abs)
		st, statErr := os.Stat(abs)
		switch {
		case err != nil || statErr != nil || !st.IsDir():
			if sub == nil {
				e.Reason = "file:// path leads to no directory of the tree: " + d.repository
				s.edges = append(s.edges, e)
				return
			}
			// Vendored under charts/, so Helm never follows the path.
			e.To, e.Definition = sub.owner, sub.chartFile
		case !inside(s.realRoot, real):
			e.Reason = "file:// path leads outside the scanned tree through a symbolic link: " + d.repository
			s.edges = append(s.edges, e)
			return
		default:
			e.To, e.Definition = s.cfg.ModuleOf(s.realRel(real)), cleanDir(target)
			if ch := s.byDir[cleanDir(target)]; ch != nil {
				e.To = ch.owner
			}
		}
	} else if sub != nil {
		e.To, e.Definition = sub.owner, sub.chartFile
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

// subchartEdge records the edge to a subchart another module owns that no
// Chart.yaml dependency reports: one reached through a symbolic link (the
// link is the dependency, whatever Chart.yaml says), or a vendored copy
// Chart.yaml does not list.
func (s *scanner) subchartEdge(c, sub *chart) {
	if sub.owner == c.module || (sub.link == nil && c.dependencyFor(sub.name) != nil) {
		return
	}
	e := edge.Edge{Rule: edge.ChartDependency, From: c.module, To: sub.owner, Target: sub.name, Definition: sub.real}
	if sub.link != nil {
		e.File, e.Via = sub.link.file, chartRef(sub.link)
		e.Reason = "a symbolic link to " + sub.real
	} else {
		e.File = sub.real
		e.Reason = "vendored without a dependency in Chart.yaml"
	}
	s.edges = append(s.edges, e)
}

// includeEdge resolves one include/template name as Helm would for c.
func (s *scanner) includeEdge(c *chart, fam *family, f *templateFile, line int, name string) {
	e := edge.Edge{Rule: edge.HelmInclude, From: c.module, File: f.rel, Line: line, Target: name}
	defs := fam.defs[name]
	if len(defs) == 0 {
		defs = s.global[name]
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
