package helm

import (
	"path"
	"strings"
)

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
