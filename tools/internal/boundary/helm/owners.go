package helm

import "sort"

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
