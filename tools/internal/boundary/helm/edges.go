package helm

import (
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"cozystack.io/tools/internal/boundary/edge"
)

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
