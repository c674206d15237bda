package depgraph

import (
	"slices"
	"strings"
)

// Graph is a directed graph whose nodes are strings such as
// "<package>/<component>"; an edge a → b says a depends on b. The zero
// value is empty and ready to use.
type Graph struct {
	edges map[string][]string
}

// Add records that from depends on each of to.
func (g *Graph) Add(from string, to ...string) {
	if g.edges == nil {
		g.edges = map[string][]string{}
	}
	g.edges[from] = append(g.edges[from], to...)
	for _, t := range to {
		if _, ok := g.edges[t]; !ok {
			g.edges[t] = nil
		}
	}
}

// Cycle returns a cycle reachable from any of starts, as the list of its
// nodes with the first repeated at the end (["a", "b", "a"]), or nil when
// there is none. The search visits nodes and edges in sorted order, so the
// same graph always yields the same cycle.
func (g *Graph) Cycle(starts ...string) []string {
	const (
		unvisited = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(n string) []string
	visit = func(n string) []string {
		switch state[n] {
		case onPath:
			i := slices.Index(path, n)
			return append(slices.Clone(path[i:]), n)
		case done:
			return nil
		}
		state[n] = onPath
		path = append(path, n)
		next := slices.Clone(g.edges[n])
		slices.Sort(next)
		for _, m := range slices.Compact(next) {
			if c := visit(m); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	starts = slices.Sorted(slices.Values(starts))
	for _, s := range starts {
		if c := visit(s); c != nil {
			return c
		}
	}
	return nil
}

// Format renders a cycle as "a → b → a".
func Format(cycle []string) string { return strings.Join(cycle, " → ") }
