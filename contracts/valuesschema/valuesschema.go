package valuesschema

// Default fills in, in place, every absent property of v whose schema has a
// default (a deep copy of it), and recurses into present properties, the
// values of additionalProperties maps and array items, following the
// properties of allOf/anyOf/oneOf branches at the same level: the
// defaulting rule of Kubernetes structural schemas. Values that are not
// objects or arrays are left alone.
func Default(schema map[string]any, v any) {
	switch t := v.(type) {
	case map[string]any:
		for _, node := range Branches(schema) {
			props, _ := node["properties"].(map[string]any)
			for name, ps := range props {
				propSchema, ok := ps.(map[string]any)
				if !ok {
					continue
				}
				if _, present := t[name]; !present {
					if def, ok := propSchema["default"]; ok {
						t[name] = DeepCopy(def)
					}
				}
				if pv, present := t[name]; present {
					Default(propSchema, pv)
				}
			}
			if ap, ok := node["additionalProperties"].(map[string]any); ok {
				for name, pv := range t {
					if _, known := props[name]; !known {
						Default(ap, pv)
					}
				}
			}
		}
	case []any:
		for _, node := range Branches(schema) {
			if items, ok := node["items"].(map[string]any); ok {
				for _, x := range t {
					Default(items, x)
				}
			}
		}
	}
}

// Branches returns schema and, recursively, its allOf/anyOf/oneOf
// subschemas, whose properties apply at the same level.
func Branches(schema map[string]any) []map[string]any {
	out := []map[string]any{schema}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		list, _ := schema[key].([]any)
		for _, b := range list {
			if m, ok := b.(map[string]any); ok {
				out = append(out, Branches(m)...)
			}
		}
	}
	return out
}

// DeepCopy copies the maps and slices of a decoded JSON value; scalars are
// immutable and shared.
func DeepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = DeepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = DeepCopy(e)
		}
		return l
	default:
		return v
	}
}
