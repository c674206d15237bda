package depgraph

import (
	"slices"
	"testing"
)

func TestCycle(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		edges  map[string][]string
		starts []string
		want   []string
	}{
		{
			name:   "no edges",
			reason: "a component depending on nothing is no cycle",
			edges:  map[string][]string{"a": nil},
			starts: []string{"a"},
			want:   nil,
		},
		{
			name:   "chain",
			reason: "dependencies in a line end somewhere",
			edges:  map[string][]string{"a": {"b"}, "b": {"c"}},
			starts: []string{"a"},
			want:   nil,
		},
		{
			name:   "diamond is not a cycle",
			reason: "a node reached twice by two paths is shared, not a loop",
			edges:  map[string][]string{"a": {"b", "c"}, "b": {"d"}, "c": {"d"}},
			starts: []string{"a"},
			want:   nil,
		},
		{
			name:   "self",
			reason: "a component depending on itself is the shortest cycle",
			edges:  map[string][]string{"a": {"a"}},
			starts: []string{"a"},
			want:   []string{"a", "a"},
		},
		{
			name:   "components",
			reason: "two components of one package depending on each other never become ready",
			edges:  map[string][]string{"p/web": {"p/db"}, "p/db": {"p/web"}},
			starts: []string{"p/web"},
			want:   []string{"p/web", "p/db", "p/web"},
		},
		{
			name:   "across packages",
			reason: "a cycle through other packages' components is found and named in order",
			edges:  map[string][]string{"a/x": {"b/y"}, "b/y": {"c/z"}, "c/z": {"a/x"}},
			starts: []string{"a/x"},
			want:   []string{"a/x", "b/y", "c/z", "a/x"},
		},
		{
			name:   "cycle not reachable from start",
			reason: "another package's cycle does not block the one being installed",
			edges:  map[string][]string{"a": {"b"}, "c": {"d"}, "d": {"c"}},
			starts: []string{"a"},
			want:   nil,
		},
		{
			name:   "reachable cycle behind a dependency",
			reason: "a cycle the start depends on blocks it, and is named from where it begins",
			edges:  map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"b"}},
			starts: []string{"a"},
			want:   []string{"b", "c", "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g Graph
			for from, to := range tt.edges {
				g.Add(from, to...)
			}
			got := g.Cycle(tt.starts...)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Cycle = %v, want %v (%s)", got, tt.want, tt.reason)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	if got := Format([]string{"a", "b", "a"}); got != "a → b → a" {
		t.Errorf("Format = %q", got)
	}
}
