package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// checkDashboard runs the K6 rules that need more than the schema: the
// icon's content and keysOrder against openAPISchema.
func checkDashboard(a *ad) []Finding {
	d := a.def.Spec.Dashboard
	if d == nil {
		return []Finding{a.finding("K6-dashboard", Warning, []string{"spec"},
			"no spec.dashboard: the dashboard does not list the kind", "add spec.dashboard (category, singular, plural, description, icon, keysOrder; k6-dashboard.md)")}
	}
	var out []Finding
	if d.Icon != "" {
		if msg := checkIcon(d.Icon); msg != "" {
			out = append(out, a.finding("K6-icon", Error, []string{"spec", "dashboard", "icon"}, msg,
				"set icon to the base64 (standard alphabet) of an SVG document without scripts or event handlers"))
		}
	}
	if a.schema != nil && len(d.KeysOrder) > 0 {
		out = append(out, checkKeysOrder(a, d.KeysOrder)...)
	}
	return out
}

var svgActive = regexp.MustCompile(`(?i)<script|\son[a-z]+\s*=|javascript:`)

// checkIcon returns what is wrong with a dashboard icon, or "".
func checkIcon(icon string) string {
	data, err := base64.StdEncoding.DecodeString(icon)
	if err != nil {
		return fmt.Sprintf("icon is not base64: %v", err)
	}
	if !bytes.Contains(data, []byte("<svg")) {
		n := min(len(data), 16)
		return fmt.Sprintf("icon decodes to %q…, not an SVG document", data[:n])
	}
	if m := svgActive.Find(data); m != nil {
		return fmt.Sprintf("icon's SVG contains %q: the dashboard would run it in its own origin", m)
	}
	return ""
}

// checkKeysOrder resolves every keysOrder path against openAPISchema and
// reports the top-level fields it leaves out.
func checkKeysOrder(a *ad, order [][]string) []Finding {
	var out []Finding
	type openKey struct {
		index int
		keys  []string
	}
	open := map[string]*openKey{}
	var openParents []string
	listed := map[string]bool{}
	for i, p := range order {
		if len(p) < 2 || p[0] != "spec" {
			continue
		}
		listed[p[1]] = true
		st, parent := resolveField(a.schema, p[1:])
		switch st {
		case fieldOpen:
			key := strings.Join(parent, ".")
			if open[key] == nil {
				open[key] = &openKey{index: i}
				openParents = append(openParents, key)
			}
			open[key].keys = append(open[key].keys, p[len(parent)])
		case fieldRejected:
			out = append(out, a.finding("K6-keys-order", Error, []string{"spec", "dashboard", "keysOrder", fmt.Sprint(i)},
				fmt.Sprintf("keysOrder names %s, which openAPISchema rejects (%s admits no such key)", strings.Join(p, "."), strings.Join(parent, ".")),
				"remove the entry or correct its path to a field of openAPISchema"))
		}
	}
	for _, key := range openParents {
		o := open[key]
		out = append(out, a.finding("K6-keys-order", Warning, []string{"spec", "dashboard", "keysOrder", fmt.Sprint(o.index)},
			fmt.Sprintf("keysOrder names %s under %s, which openAPISchema does not declare: %s is an open object (free-form keys), so the form has no type, description or default for them",
				strings.Join(o.keys, ", "), key, key),
			fmt.Sprintf("declare %s in the properties of %s, or drop them from keysOrder", strings.Join(o.keys, ", "), key)))
	}
	props, _ := a.schema["properties"].(map[string]any)
	var missing []string
	for _, k := range sortedKeys(props) {
		if !listed[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		out = append(out, a.finding("K6-keys-order-missing", Warning, []string{"spec", "dashboard", "keysOrder"},
			fmt.Sprintf("keysOrder lists no path for the field(s) %s of openAPISchema: the form does not order them", strings.Join(missing, ", ")),
			fmt.Sprintf("add [spec, %s] to keysOrder where the field belongs", missing[0])))
	}
	return out
}

type fieldStatus int

const (
	fieldDeclared fieldStatus = iota
	// fieldOpen: admitted only as a free-form key of an open object.
	fieldOpen
	// fieldRejected: the schema refuses the key.
	fieldRejected
)

// resolveField walks path (spec field names; array items are stepped
// into) through schema and says whether the field is declared; for an
// undeclared one it returns the path (rooted at spec) of the object that
// lacks it.
func resolveField(schema map[string]any, path []string) (fieldStatus, []string) {
	node := schema
	parent := []string{"spec"}
	for _, seg := range path {
		for {
			items, ok := node["items"].(map[string]any)
			if !ok || node["properties"] != nil {
				break
			}
			node = items
		}
		if next := propertyOf(node, seg); next != nil {
			node = next
			parent = append(parent, seg)
			continue
		}
		if ap, ok := node["additionalProperties"].(map[string]any); ok && len(ap) > 0 {
			node = ap
			parent = append(parent, seg)
			continue
		}
		if isOpen(node) {
			return fieldOpen, parent
		}
		return fieldRejected, parent
	}
	return fieldDeclared, nil
}

// propertyOf returns the subschema of property name of node, looking into
// allOf, anyOf and oneOf branches too.
func propertyOf(node map[string]any, name string) map[string]any {
	if props, ok := node["properties"].(map[string]any); ok {
		if p, ok := props[name].(map[string]any); ok {
			return p
		}
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		branches, _ := node[kw].([]any)
		for _, b := range branches {
			if bm, ok := b.(map[string]any); ok {
				if p := propertyOf(bm, name); p != nil {
					return p
				}
			}
		}
	}
	return nil
}

// isOpen is true for an object schema that admits undeclared keys.
func isOpen(node map[string]any) bool {
	if b, _ := node["x-kubernetes-preserve-unknown-fields"].(bool); b {
		return true
	}
	switch ap := node["additionalProperties"].(type) {
	case bool:
		return ap
	case map[string]any:
		return len(ap) == 0
	}
	return true
}

func compactJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(data)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
