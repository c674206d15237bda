package charttest

// The targets of the injection test (injection.go): the places of a
// values schema where a tenant writes a string.

import (
	"maps"
	"slices"
	"strings"
)

// Target is a place of a values schema where a tenant writes a string: a
// field whose schema admits a string, or the keys of a map.
type Target struct {
	// Path leads to the field, or to the map for a key: property names,
	// "*" for a map's value, "[]" for an array's item.
	Path []string
	// Key is true for the keys of the map at Path.
	Key bool
}

// String renders t as users.*.password, disks[].name or
// resourceQuotas.<key>.
func (t Target) String() string {
	var b strings.Builder
	for _, p := range t.Path {
		if p != "[]" && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	if t.Key {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString("<key>")
	}
	return b.String()
}

// StringTargets returns every Target of a values schema, sorted by
// String, leaving out the ReservedKeys. It follows properties,
// patternProperties and additionalProperties (a map: its keys and its
// values), items and prefixItems, and the branches of anyOf, oneOf and
// allOf. A schema admits a string when its type is or includes "string",
// or it has no type and describes no object or array.
func StringTargets(schema map[string]any) []Target {
	seen := map[string]Target{}
	var walk func(s any, path []string, depth int)
	walk = func(s any, path []string, depth int) {
		m, ok := s.(map[string]any)
		if !ok || depth > 32 {
			return
		}
		if admitsString(m) {
			t := Target{Path: slices.Clone(path)}
			seen[t.String()] = t
		}
		props, _ := m["properties"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if len(path) == 0 && slices.Contains(ReservedKeys, name) {
				continue
			}
			walk(props[name], append(slices.Clone(path), name), depth+1)
		}
		isMap := false
		if ap, ok := m["additionalProperties"].(map[string]any); ok {
			isMap = true
			walk(ap, append(slices.Clone(path), "*"), depth+1)
		}
		pp, _ := m["patternProperties"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(pp)) {
			isMap = true
			walk(pp[k], append(slices.Clone(path), "*"), depth+1)
		}
		if isMap {
			t := Target{Path: slices.Clone(path), Key: true}
			seen[t.String()] = t
		}
		walk(m["items"], append(slices.Clone(path), "[]"), depth+1)
		if l, ok := m["prefixItems"].([]any); ok {
			for _, it := range l {
				walk(it, append(slices.Clone(path), "[]"), depth+1)
			}
		}
		for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
			if l, ok := m[kw].([]any); ok {
				for _, b := range l {
					walk(b, path, depth+1)
				}
			}
		}
	}
	walk(schema, nil, 0)
	out := make([]Target, 0, len(seen))
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, seen[k])
	}
	return out
}

func admitsString(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "string"
	case []any:
		return slices.Contains(t, any("string"))
	}
	for _, kw := range []string{"properties", "additionalProperties", "patternProperties", "items", "prefixItems", "anyOf", "oneOf", "allOf", "enum", "const"} {
		if _, ok := m[kw]; ok {
			return false
		}
	}
	return true
}
