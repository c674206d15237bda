package appschema

import (
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/valuesschema"
)

// Deprecated returns a message per field present in spec whose schema says
// "deprecated": true, for Warning headers.
func (s *Schema) Deprecated(spec map[string]any) []string {
	var out []string
	walkDeprecated(s.raw, spec, field.NewPath("spec"), &out)
	sort.Strings(out)
	return out
}

func walkDeprecated(schema map[string]any, v any, path *field.Path, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		for _, node := range valuesschema.Branches(schema) {
			props, _ := node["properties"].(map[string]any)
			for name, ps := range props {
				m, ok := ps.(map[string]any)
				if !ok {
					continue
				}
				val, present := t[name]
				if !present {
					continue
				}
				if dep, _ := m["deprecated"].(bool); dep {
					msg := path.Child(name).String() + " is deprecated"
					if d, _ := m["description"].(string); d != "" {
						msg += ": " + d
					}
					*out = append(*out, msg)
				}
				walkDeprecated(m, val, path.Child(name), out)
			}
		}
	case []any:
		for _, node := range valuesschema.Branches(schema) {
			if items, ok := node["items"].(map[string]any); ok {
				for i, x := range t {
					walkDeprecated(items, x, path.Index(i), out)
				}
			}
		}
	}
}
