package charttest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// PlatformKeys are the top-level values the platform provides (contract
// K2) rather than the tenant: a chart's values schema must accept them,
// as open objects, because their schema is K2's and grows with the
// platform.
var PlatformKeys = []string{"_cluster", "_namespace"}

// ReservedKeys are the top-level values no tenant sets, which an
// ApplicationDefinition's openAPISchema therefore leaves out: the
// PlatformKeys, and "cozy-lib", the values Helm gives every dependency
// (an empty object with "global", for the library chart), which the
// values schema must accept, strictly.
var ReservedKeys = append(slices.Clone(PlatformKeys), "cozy-lib")

// StrictnessViolations returns the paths (JSON-pointer-like) of object
// schemas in a values schema that accept unknown keys (contract K4): every
// object must say additionalProperties false, or be a map whose
// additionalProperties is the schema of its items. The PlatformKeys at the
// top are exempt.
func StrictnessViolations(schema map[string]any) []string {
	var out []string
	var walk func(s map[string]any, path string, top bool)
	walk = func(s map[string]any, path string, top bool) {
		if s["type"] == "object" {
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if ap {
					out = append(out, path)
				}
			case map[string]any:
				walk(ap, path+"/*", false)
			default:
				out = append(out, path)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if top && slices.Contains(PlatformKeys, name) {
				continue
			}
			if p, ok := props[name].(map[string]any); ok {
				walk(p, path+"/"+name, false)
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(items, path+"/[]", false)
		}
	}
	walk(schema, "", true)
	return out
}

// StrictPaths returns the property paths of the strict objects
// (additionalProperties false) of a values schema, the root as [] first.
// A map's items appear under the key "x"; array items are skipped.
func StrictPaths(schema map[string]any) [][]string {
	var out [][]string
	var walk func(s map[string]any, path []string, top bool)
	walk = func(s map[string]any, path []string, top bool) {
		if s["type"] != "object" {
			return
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				out = append(out, slices.Clone(path))
			}
		case map[string]any:
			walk(ap, append(slices.Clone(path), "x"), false)
		}
		props, _ := s["properties"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if top && slices.Contains(PlatformKeys, name) {
				continue
			}
			if p, ok := props[name].(map[string]any); ok {
				walk(p, append(slices.Clone(path), name), false)
			}
		}
	}
	walk(schema, nil, true)
	return out
}

// UnknownKey is the key WithUnknownKey adds.
const UnknownKey = "notAKnownKey"

// WithUnknownKey returns a deep copy of values with UnknownKey set at path
// (the objects on the way are created when missing), so that a strict
// schema must reject it.
func WithUnknownKey(values map[string]any, path []string) map[string]any {
	out := deepCopy(values).(map[string]any)
	m := out
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[UnknownKey] = true
	return out
}

// PathString renders a path for messages: "/" for the root.
func PathString(path []string) string { return "/" + strings.Join(path, "/") }

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = deepCopy(e)
		}
		return l
	default:
		return v
	}
}

// WithoutReservedKeys returns a copy of a values schema without the
// ReservedKeys properties: the openAPISchema of the chart's
// ApplicationDefinition.
func WithoutReservedKeys(schema map[string]any) (map[string]any, error) {
	out := deepCopy(schema).(map[string]any)
	props, ok := out["properties"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the schema has no properties")
	}
	for _, k := range ReservedKeys {
		if _, ok := props[k]; !ok {
			return nil, fmt.Errorf("the schema lacks the reserved key %s", k)
		}
		delete(props, k)
	}
	return out, nil
}
