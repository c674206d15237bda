package appschema

import (
	"context"
	"strings"
	"testing"
)

// The upstream ADs' rules (storageClass immutability, 11 of them) compile
// and hold: a create passes, changing the class is refused.
func TestUpstreamRules(t *testing.T) {
	n := 0
	names, docs := upstreamSchemas(t)
	for _, name := range names {
		s, err := Compile(docs[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.rules == nil {
			continue
		}
		for _, path := range rulePaths(s.Raw(), nil) {
			n++
			spec, old, changed := nest(path, "fast"), nest(path, "fast"), nest(path, "slow")
			s.Default(spec)
			s.Default(old)
			s.Default(changed)
			if errs := s.ValidateRules(context.Background(), spec, nil); len(errs) > 0 {
				t.Errorf("%s %v: create: %v", name, path, errs)
			}
			if errs := s.ValidateRules(context.Background(), spec, old); len(errs) > 0 {
				t.Errorf("%s %v: unchanged update: %v", name, path, errs)
			}
			if errs := s.ValidateRules(context.Background(), changed, old); len(errs) != 1 || !strings.Contains(errs[0].Error(), "storageClass is immutable") {
				t.Errorf("%s %v: changing it: %v, want it refused", name, path, errs)
			}
		}
	}
	if n != 11 {
		t.Errorf("%d upstream rules, want 11", n)
	}
}

// rulePaths returns the property paths of schema that carry
// x-kubernetes-validations.
func rulePaths(schema map[string]any, prefix []string) [][]string {
	var out [][]string
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		ps, _ := p.(map[string]any)
		path := append(append([]string(nil), prefix...), name)
		if _, ok := ps["x-kubernetes-validations"]; ok {
			out = append(out, path)
		}
		out = append(out, rulePaths(ps, path)...)
	}
	return out
}

// nest returns {path[0]: {path[1]: ... value}}.
func nest(path []string, value any) map[string]any {
	out := map[string]any{}
	cur := out
	for i, p := range path {
		if i == len(path)-1 {
			cur[p] = value
			break
		}
		next := map[string]any{}
		cur[p] = next
		cur = next
	}
	return out
}
