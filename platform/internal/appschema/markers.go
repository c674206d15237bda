package appschema

import (
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/valuesschema"
)

// HostField is a value of spec in a field whose schema says
// "x-cozystack-host": true (contract K1): the field names a host.
type HostField struct {
	Path  *field.Path
	Value string
}

// Hosts returns every non-empty string in spec at a field marked
// x-cozystack-host, in a stable order, through properties, items and
// additionalProperties.
func (s *Schema) Hosts(spec map[string]any) []HostField {
	var out []HostField
	isHost := func(v any) bool { t, ok := v.(string); return ok && t != "" }
	for _, m := range marked(s.raw, spec, "x-cozystack-host", isHost) {
		out = append(out, HostField{Path: m.path, Value: m.value.(string)})
	}
	return out
}

// markedValue is a value of spec at a field whose schema carries a marker.
type markedValue struct {
	path  *field.Path
	value any
}

// marked returns every value of spec that accept takes at a field whose
// schema (or one of its allOf/anyOf/oneOf branches) says "<marker>": true,
// walking properties, additionalProperties and items, in path order and
// each path once (branches may reach one field twice). Below a marked
// value nothing is looked at.
func marked(schema map[string]any, spec map[string]any, marker string, accept func(any) bool) []markedValue {
	var out []markedValue
	walkMarked(schema, spec, field.NewPath("spec"), marker, accept, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].path.String() < out[j].path.String() })
	return slices.CompactFunc(out, func(a, b markedValue) bool { return a.path.String() == b.path.String() })
}

func walkMarked(schema map[string]any, v any, path *field.Path, marker string, accept func(any) bool, out *[]markedValue) {
	if accept(v) {
		for _, node := range valuesschema.Branches(schema) {
			if on, _ := node[marker].(bool); on {
				*out = append(*out, markedValue{path: path, value: v})
				return
			}
		}
	}
	switch t := v.(type) {
	case map[string]any:
		for _, node := range valuesschema.Branches(schema) {
			props, _ := node["properties"].(map[string]any)
			for _, name := range sortedKeys(t) {
				if ps, ok := props[name].(map[string]any); ok {
					walkMarked(ps, t[name], path.Child(name), marker, accept, out)
				} else if ap, ok := node["additionalProperties"].(map[string]any); ok {
					walkMarked(ap, t[name], path.Key(name), marker, accept, out)
				}
			}
		}
	case []any:
		for _, node := range valuesschema.Branches(schema) {
			if items, ok := node["items"].(map[string]any); ok {
				for i, x := range t {
					walkMarked(items, x, path.Index(i), marker, accept, out)
				}
			}
		}
	}
}

// RestoreOnlyField is a value of spec in a field whose schema says
// "x-cozystack-restore-only": true (contract K1, "Restore-only fields"):
// only the backup core's restore sets it.
type RestoreOnlyField struct {
	Path  *field.Path
	Value any
}

// RestoreOnly returns every non-empty value in spec at a field marked
// x-cozystack-restore-only, in a stable order, through properties, items
// and additionalProperties. Empty is absent, null, "", an empty list or an
// object whose every value is empty (so a schema default of {} sets
// nothing).
func (s *Schema) RestoreOnly(spec map[string]any) []RestoreOnlyField {
	var out []RestoreOnlyField
	for _, m := range marked(s.raw, spec, "x-cozystack-restore-only", func(v any) bool { return !IsEmpty(v) }) {
		out = append(out, RestoreOnlyField{Path: m.path, Value: m.value})
	}
	return out
}

// IsEmpty reports whether v is empty as RestoreOnly counts it.
func IsEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case map[string]any:
		for _, x := range t {
			if !IsEmpty(x) {
				return false
			}
		}
		return true
	}
	return false
}
