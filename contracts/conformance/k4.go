package conformance

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"cozystack.io/contracts/artifact"
)

// checkK4 checks the values schemas: required for application charts,
// checked when present for components.
func checkK4(cat *artifact.Catalog, charts chartSet) []Finding {
	apps := map[string]bool{}
	if cat != nil {
		for _, a := range cat.Applications {
			apps[a.Chart] = true
		}
	}
	var out []Finding
	for _, p := range charts.paths() {
		c := charts[p]
		switch {
		case c.schemaErr != nil:
			out = append(out, Finding{RuleID: "K4-root", Severity: Error, File: c.schemaFile(), Message: "values.schema.json is not one JSON document: " + c.schemaErr.Error(),
				Fix: "fix the JSON"})
		case c.schemaDoc == nil && apps[p]:
			out = append(out, Finding{RuleID: "K4-schema-missing", Severity: Error, File: c.schemaFile(),
				Message: "the application chart has no values.schema.json: Helm accepts any values, so a renamed or removed key is silently dropped",
				Fix:     "add a values.schema.json whose objects reject unknown keys (k4-values.md)"})
		case c.schemaDoc != nil:
			out = append(out, valuesSchemaFindings(c, apps[p])...)
		}
	}
	return out
}

// valuesSchemaFindings applies the K4 rules to one chart's schema;
// application (a chart of catalog.yaml's applications, whose values
// tenants write) adds K4-unbounded.
func valuesSchemaFindings(c *loadedChart, application bool) []Finding {
	file := c.schemaFile()
	f := func(rule string, segs []string, msg, fix string) Finding {
		return Finding{RuleID: rule, Severity: Error, File: file, Line: c.schemaPos.line(segs...), Path: pointer(segs...), Message: msg, Fix: fix}
	}
	root, ok := c.schemaDoc.(map[string]any)
	if !ok {
		return []Finding{f("K4-root", nil, "the schema is not a JSON object", "write an object schema")}
	}
	var out []Finding
	if !isObjectType(root) || root["additionalProperties"] != false {
		out = append(out, f("K4-root", nil, "the root is not {\"type\": \"object\", \"additionalProperties\": false}: values with unknown top-level keys pass",
			"set \"type\": \"object\" and \"additionalProperties\": false at the root"))
	}
	if root["patternProperties"] != nil || root["x-kubernetes-preserve-unknown-fields"] == true {
		out = append(out, f("K4-root", nil, "the root admits keys beyond its properties (patternProperties or x-kubernetes-preserve-unknown-fields)",
			"remove patternProperties and x-kubernetes-preserve-unknown-fields from the root, and list every top-level key in properties"))
	}
	props, _ := root["properties"].(map[string]any)
	for _, k := range PlatformKeys {
		p, ok := props[k].(map[string]any)
		switch {
		case !ok:
			out = append(out, f("K4-platform-keys", []string{"properties"}, fmt.Sprintf("the schema does not admit %s: every install fails, because the platform adds it to the values (K2) and Helm validates them against this schema", k),
				fmt.Sprintf("add \"%s\": {\"type\": \"object\"} to the root's properties", k)))
		case !isObjectType(p) || p["additionalProperties"] != nil || p["properties"] != nil || p["required"] != nil:
			out = append(out, f("K4-platform-keys", []string{"properties", k}, fmt.Sprintf("%s must be an open object, {\"type\": \"object\"}: its schema is K2's and grows with the platform, so a stricter one breaks when the platform adds a key", k),
				fmt.Sprintf("set \"%s\": {\"type\": \"object\"} (a description may stay)", k)))
		}
	}
	deps := c.dependencyKeys()
	for _, k := range deps {
		if _, ok := props[k]; !ok {
			out = append(out, f("K4-dependency-key", []string{"properties"}, fmt.Sprintf("the schema does not admit %s, the key of a dependency: Helm adds it to the values (for a library, {global: {}}) and then refuses them", k),
				fmt.Sprintf("add \"%s\": {\"type\": \"object\", \"additionalProperties\": false, \"properties\": {\"global\": {\"type\": \"object\", \"additionalProperties\": false}}}", k)))
		}
	}
	if application {
		out = append(out, unboundedFindings(c, props, append(slices.Clone(PlatformKeys), deps...))...)
	}
	for _, k := range sortedKeys(props) {
		if slices.Contains(PlatformKeys, k) || slices.Contains(deps, k) {
			continue
		}
		for _, ptr := range openObjects(props[k], []string{"properties", k}) {
			out = append(out, f("K4-open-object", ptr, fmt.Sprintf("the object at %s accepts unknown keys: a renamed or removed key is silently dropped instead of refused", valuePath(ptr)),
				"set \"additionalProperties\": false, or give a map's values their schema in additionalProperties"))
		}
	}
	return out
}

// isObjectType is true when a schema's type is "object" or a list that
// holds it.
func isObjectType(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

// openObjects returns the locations of the object subschemas of v that
// admit unknown keys (the rule of k4-values.schema.json#/$defs/strict).
func openObjects(v any, ptr []string) [][]string {
	var out [][]string
	walkStrict(v, ptr, func(node map[string]any, at []string) {
		if !isObjectType(node) {
			return
		}
		ap := node["additionalProperties"]
		m, isMap := ap.(map[string]any)
		if ap != false && !(isMap && len(m) > 0) || node["x-kubernetes-preserve-unknown-fields"] == true {
			out = append(out, at)
		}
	})
	return out
}

// walkStrict calls fn for v and every subschema the strict rule reaches.
// It walks patternProperties, which K1 refuses in an application chart
// (K1-openapi-schema), for the schemas K1 does not see: component charts'
// and those of a catalog checked without its ApplicationDefinitions
// (k4-values.md, rule 4).
func walkStrict(v any, ptr []string, fn func(map[string]any, []string)) {
	node, ok := v.(map[string]any)
	if !ok {
		return
	}
	fn(node, ptr)
	at := func(seg ...string) []string { return append(slices.Clone(ptr), seg...) }
	for _, kw := range []string{"properties", "patternProperties", "$defs"} {
		if m, ok := node[kw].(map[string]any); ok {
			for _, k := range sortedKeys(m) {
				walkStrict(m[k], at(kw, k), fn)
			}
		}
	}
	for _, kw := range []string{"additionalProperties", "items"} {
		walkStrict(node[kw], at(kw), fn)
	}
	for _, kw := range []string{"prefixItems", "allOf", "anyOf", "oneOf"} {
		if l, ok := node[kw].([]any); ok {
			for i, e := range l {
				walkStrict(e, at(kw, fmt.Sprint(i)), fn)
			}
		}
	}
}

// valuePath renders a schema location as the values path it describes:
// #/properties/users/additionalProperties/properties/password is
// users.*.password.
func valuePath(ptr []string) string {
	var parts []string
	for i := 0; i < len(ptr); i++ {
		switch ptr[i] {
		case "properties", "patternProperties":
			if i+1 < len(ptr) {
				parts = append(parts, ptr[i+1])
				i++
			}
		case "additionalProperties":
			parts = append(parts, "*")
		case "items":
			parts = append(parts, "[]")
		}
	}
	if len(parts) == 0 {
		return "the root"
	}
	return strings.Join(parts, ".")
}

// schemaKey is one key a values schema declares.
type schemaKey struct {
	ptr    []string // location of its subschema
	parent string   // pointer of the object declaring it
	name   string
	schema map[string]any
}

// declaredKeys returns the keys a values schema declares through
// properties, below the root's platform and dependency keys.
func declaredKeys(doc any, skip []string) []schemaKey {
	var out []schemaKey
	walkStrict(doc, nil, func(node map[string]any, at []string) {
		props, _ := node["properties"].(map[string]any)
		for _, k := range sortedKeys(props) {
			if len(at) == 0 && slices.Contains(skip, k) {
				continue
			}
			sub, _ := props[k].(map[string]any)
			out = append(out, schemaKey{ptr: append(slices.Clone(at), "properties", k), parent: pointer(at...), name: k, schema: sub})
		}
	})
	return out
}

// checkK4Diff reports keys of the previous version's values schemas that
// the current version removed or renamed, chart by published name, unless
// the previous version marked the key (or a key it is under)
// "deprecated": true: the retirement path of k4-values.md, one version
// deprecated, then removed.
func checkK4Diff(cur, prev *Source, curCharts, prevCharts chartSet) []Finding {
	if cur.Catalog == nil || prev.Catalog == nil {
		return nil
	}
	var out []Finding
	curByName, prevByName := cur.Catalog.PublishedCharts(), prev.Catalog.PublishedCharts()
	for _, name := range sortedKeys(toAny(curByName)) {
		pp, ok := prevByName[name]
		if !ok {
			continue
		}
		c, p := curCharts.get(curByName[name]), prevCharts.get(pp)
		if c == nil || p == nil || c.schemaDoc == nil || p.schemaDoc == nil {
			continue
		}
		skip := append(slices.Clone(PlatformKeys), c.dependencyKeys()...)
		skip = append(skip, p.dependencyKeys()...)
		oldKeys, newKeys := declaredKeys(p.schemaDoc, skip), declaredKeys(c.schemaDoc, skip)
		has := map[string]schemaKey{}
		for _, k := range newKeys {
			has[pointer(k.ptr...)] = k
		}
		old := map[string]bool{}
		var deprecated []string // old keys marked "deprecated": true
		for _, k := range oldKeys {
			old[pointer(k.ptr...)] = true
			if k.schema["deprecated"] == true {
				deprecated = append(deprecated, pointer(k.ptr...))
			}
		}
		var removed []string
		for _, k := range oldKeys {
			ptr := pointer(k.ptr...)
			if _, ok := has[ptr]; ok {
				continue
			}
			if slices.ContainsFunc(removed, func(r string) bool { return strings.HasPrefix(ptr, r+"/") }) {
				continue // below a key already reported or retired
			}
			removed = append(removed, ptr)
			if slices.ContainsFunc(deprecated, func(d string) bool { return d == ptr || strings.HasPrefix(ptr, d+"/") }) {
				continue // retired: the previous version deprecated it (or a key it is under)
			}
			line := c.schemaPos.line(append(pointerSegments(k.parent), "properties")...)
			renamed := ""
			for _, n := range newKeys {
				if n.parent == k.parent && !old[pointer(n.ptr...)] && sameSchema(n.schema, k.schema) {
					renamed = n.name
					break
				}
			}
			if renamed != "" {
				out = append(out, Finding{RuleID: "K4-key-renamed", Severity: Error, File: c.schemaFile(), Line: line, Path: ptr,
					Message: fmt.Sprintf("%s (version %s) is renamed to %s in version %s: objects that set %s stop validating on upgrade (the schema now refuses the key)",
						valuePath(k.ptr), prev.Catalog.Version, valuePath(append(pointerSegments(k.parent), "properties", renamed)), cur.Catalog.Version, valuePath(k.ptr)),
					Fix: fmt.Sprintf("keep %s with \"deprecated\": true beside %s for one version (the chart maps it to %s), then remove it in the next: a key the previous version deprecated may go", k.name, renamed, renamed)})
				continue
			}
			out = append(out, Finding{RuleID: "K4-key-removed", Severity: Error, File: c.schemaFile(), Line: line, Path: ptr,
				Message: fmt.Sprintf("%s (version %s) is removed in version %s: objects that set it stop validating on upgrade", valuePath(k.ptr), prev.Catalog.Version, cur.Catalog.Version),
				Fix:     fmt.Sprintf("keep %s with \"deprecated\": true for one version (the API warns on its use), then remove it in the next: a key the previous version deprecated may go", k.name)})
		}
	}
	return out
}

// sameSchema compares two subschemas ignoring their documentation.
func sameSchema(a, b map[string]any) bool {
	strip := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if k != "description" && k != "title" && k != "deprecated" {
				out[k] = v
			}
		}
		return out
	}
	return reflect.DeepEqual(normalizeNumbers(strip(a)), normalizeNumbers(strip(b)))
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
