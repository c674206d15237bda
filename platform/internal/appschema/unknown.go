package appschema

import (
	"maps"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/valuesschema"
)

// UnknownFields returns the paths of fields the schema does not know, in
// lexical order.
func (s *Schema) UnknownFields(spec map[string]any) []string {
	var out []string
	walkUnknown(s.raw, spec, field.NewPath("spec"), nil, func(p *field.Path, _ []string, _ map[string]any, _ string) {
		out = append(out, p.String())
	})
	sort.Strings(out)
	return out
}

// UnknownField is a field of a spec the schema does not know.
type UnknownField struct {
	// Path is the field's path from spec ("spec.users[app].colour").
	Path *field.Path
	// Keys are the object keys from spec down to the field, so a JSON
	// merge patch can name it; nil when an array lies on the way (a merge
	// patch replaces arrays whole).
	Keys []string
	// Value is the field's value (nil for a JSON null).
	Value any
}

// Unknown returns the fields UnknownFields reports with their values, in
// the same order.
func (s *Schema) Unknown(spec map[string]any) []UnknownField {
	var out []UnknownField
	walkUnknown(s.raw, spec, field.NewPath("spec"), []string{}, func(p *field.Path, keys []string, parent map[string]any, key string) {
		out = append(out, UnknownField{Path: p, Keys: keys, Value: parent[key]})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path.String() < out[j].Path.String() })
	return out
}

// Prune removes the fields UnknownFields reports and returns their paths.
func (s *Schema) Prune(spec map[string]any) []string {
	var out []string
	walkUnknown(s.raw, spec, field.NewPath("spec"), nil, func(p *field.Path, _ []string, parent map[string]any, key string) {
		out = append(out, p.String())
		delete(parent, key)
	})
	sort.Strings(out)
	return out
}

// walkUnknown calls found for each field of v its schema does not know;
// keys are the object keys down to v (nil below an array).
func walkUnknown(schema map[string]any, v any, path *field.Path, keys []string, found func(*field.Path, []string, map[string]any, string)) {
	switch t := v.(type) {
	case map[string]any:
		known := map[string]map[string]any{}
		var additional map[string]any
		hasProps, open := false, false
		for _, node := range valuesschema.Branches(schema) {
			if preserve, _ := node["x-kubernetes-preserve-unknown-fields"].(bool); preserve {
				open = true
			}
			if props, ok := node["properties"].(map[string]any); ok {
				hasProps = true
				for name, ps := range props {
					if m, ok := ps.(map[string]any); ok {
						known[name] = m
					}
				}
			}
			switch ap := node["additionalProperties"].(type) {
			case bool:
				open = open || ap
			case map[string]any:
				additional = ap
			}
		}
		free := !hasProps && additional == nil
		for _, name := range sortedKeys(t) {
			child := path.Child(name)
			var sub []string
			if keys != nil {
				sub = append(slices.Clip(keys), name)
			}
			if ps, ok := known[name]; ok {
				walkUnknown(ps, t[name], child, sub, found)
				continue
			}
			if additional != nil {
				walkUnknown(additional, t[name], path.Key(name), sub, found)
				continue
			}
			if open || free {
				continue
			}
			found(child, sub, t, name)
		}
	case []any:
		for _, node := range valuesschema.Branches(schema) {
			if items, ok := node["items"].(map[string]any); ok {
				for i, x := range t {
					walkUnknown(items, x, path.Index(i), nil, found)
				}
			}
		}
	}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
