package depgraph

import (
	"slices"
	"testing"
)

func TestCycle(t *testing.T) {
	tests := []struct {
		name   string
		edges  map[string][]string
		starts []string
		want   []string
	}{
		{"no edges", map[string][]string{"a": nil}, []string{"a"}, nil},
		{"chain", map[string][]string{"a": {"b"}, "b": {"c"}}, []string{"a"}, nil},
		{"diamond is not a cycle", map[string][]string{"a": {"b", "c"}, "b": {"d"}, "c": {"d"}}, []string{"a"}, nil},
		{"self", map[string][]string{"a": {"a"}}, []string{"a"}, []string{"a", "a"}},
		{"components", map[string][]string{"p/web": {"p/db"}, "p/db": {"p/web"}}, []string{"p/web"},
			[]string{"p/web", "p/db", "p/web"}},
		{"across packages", map[string][]string{
			"a/x": {"b/y"}, "b/y": {"c/z"}, "c/z": {"a/x"},
		}, []string{"a/x"}, []string{"a/x", "b/y", "c/z", "a/x"}},
		{"cycle not reachable from start", map[string][]string{"a": {"b"}, "c": {"d"}, "d": {"c"}}, []string{"a"}, nil},
		{"reachable cycle behind a dependency", map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"b"}}, []string{"a"},
			[]string{"b", "c", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g Graph
			for from, to := range tt.edges {
				g.Add(from, to...)
			}
			got := g.Cycle(tt.starts...)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Cycle = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	if got := Format([]string{"a", "b", "a"}); got != "a → b → a" {
		t.Errorf("Format = %q", got)
	}
}
