package conformance

// Schema navigation for K4-unquoted-string (k4strings.go): the subschemas
// of a value, and whether a schema admits a free string.

import (
	"regexp"
	"regexp/syntax"
	"slices"
)

type childSchema struct {
	schema any
	step   string // the path step: the name, "*" or "[]"
}

func schemaMapOf(s any) map[string]any {
	m, _ := s.(map[string]any)
	return m
}

// branches returns s and the subschemas of its anyOf, oneOf and allOf.
func branches(s any) []map[string]any {
	m := schemaMapOf(s)
	if m == nil {
		return nil
	}
	out := []map[string]any{m}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if l, ok := m[kw].([]any); ok {
			for _, b := range l {
				out = append(out, branches(b)...)
			}
		}
	}
	return out
}

// childSchemas returns the schemas of property name of an object schema.
func childSchemas(s any, name string) []childSchema {
	if schemaMapOf(s) == nil {
		return []childSchema{{schema: nil, step: name}} // unconstrained
	}
	var out []childSchema
	for _, b := range branches(s) {
		if p, ok := schemaMapOf(b["properties"])[name]; ok {
			out = append(out, childSchema{p, name})
			continue
		}
		matched := false
		for _, pat := range sortedKeys(schemaMapOf(b["patternProperties"])) {
			if re, err := regexp.Compile(pat); err == nil && re.MatchString(name) {
				out = append(out, childSchema{schemaMapOf(b["patternProperties"])[pat], "*"})
				matched = true
			}
		}
		if matched {
			continue
		}
		switch ap := b["additionalProperties"].(type) {
		case map[string]any:
			out = append(out, childSchema{ap, "*"})
		case bool:
			if ap {
				out = append(out, childSchema{nil, "*"})
			}
		case nil:
			if isObjectType(b) && b["properties"] == nil && b["patternProperties"] == nil {
				out = append(out, childSchema{nil, "*"})
			}
		}
	}
	return out
}

// allChildSchemas returns the schemas of every property and item.
func allChildSchemas(s any) []childSchema {
	if schemaMapOf(s) == nil {
		return []childSchema{{schema: nil, step: "*"}}
	}
	var out []childSchema
	for _, b := range branches(s) {
		props := schemaMapOf(b["properties"])
		for _, k := range sortedKeys(props) {
			out = append(out, childSchema{props[k], k})
		}
		pp := schemaMapOf(b["patternProperties"])
		for _, k := range sortedKeys(pp) {
			out = append(out, childSchema{pp[k], "*"})
		}
		switch ap := b["additionalProperties"].(type) {
		case map[string]any:
			out = append(out, childSchema{ap, "*"})
		case bool:
			if ap {
				out = append(out, childSchema{nil, "*"})
			}
		}
		if items, ok := b["items"]; ok {
			out = append(out, childSchema{items, "[]"})
		}
		if l, ok := b["prefixItems"].([]any); ok {
			for _, it := range l {
				out = append(out, childSchema{it, "[]"})
			}
		}
	}
	return out
}

func isArraySchema(s any) bool {
	for _, b := range branches(s) {
		switch t := b["type"].(type) {
		case string:
			if t == "array" {
				return true
			}
		case []any:
			if slices.Contains(t, any("array")) {
				return true
			}
		}
	}
	return false
}

func joinPath(p, step string) string {
	switch {
	case p == "":
		return step
	case step == "[]":
		return p + "[]"
	}
	return p + "." + step
}

// types returns the JSON types a schema names, nil for none.
func types(m map[string]any) []string {
	switch t := m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// freeString is true when s admits a string that no enum, const or
// guarding pattern restricts.
func freeString(s any) bool {
	m := schemaMapOf(s)
	if m == nil {
		return s != false
	}
	if _, ok := m["enum"]; ok {
		return false
	}
	if _, ok := m["const"]; ok {
		return false
	}
	if p, ok := m["pattern"].(string); ok && guardingPattern(p) {
		return false
	}
	if l, ok := m["allOf"].([]any); ok {
		for _, b := range l {
			if !freeString(b) {
				return false
			}
		}
	}
	if ts := types(m); ts != nil && !slices.Contains(ts, "string") {
		return false
	}
	anyOf, hasAny := m["anyOf"].([]any)
	oneOf, hasOne := m["oneOf"].([]any)
	if hasAny || hasOne {
		for _, b := range append(slices.Clone(anyOf), oneOf...) {
			if freeString(b) {
				return true
			}
		}
		return false
	}
	if types(m) == nil {
		// No type: any value, unless the schema only describes an
		// object or an array.
		for _, kw := range []string{"properties", "additionalProperties", "patternProperties", "items", "prefixItems"} {
			if _, ok := m[kw]; ok {
				return false
			}
		}
	}
	return true
}

// keyFree is true when the keys of the object s describes are free
// strings: it admits keys beyond its properties (additionalProperties not
// false, or a patternProperties pattern that does not guard), and no
// propertyNames restricts them.
func keyFree(s any) bool {
	if schemaMapOf(s) == nil {
		return s != false
	}
	for _, b := range branches(s) {
		if !isObjectType(b) && b["additionalProperties"] == nil && b["properties"] == nil && b["patternProperties"] == nil {
			continue
		}
		if pn, ok := b["propertyNames"]; ok && !freeString(pn) {
			continue
		}
		if b["additionalProperties"] != false {
			return true
		}
		for pat := range schemaMapOf(b["patternProperties"]) {
			if !guardingPattern(pat) {
				return true
			}
		}
	}
	return false
}

// freePath returns the path of a free string s holds: itself, a key or a
// value below it.
func freePath(s any, path string, depth int) (string, bool) {
	if depth > 16 {
		return "", false
	}
	if freeString(s) {
		return path, true
	}
	if keyFree(s) {
		return path + ".<key>", true
	}
	for _, c := range allChildSchemas(s) {
		if p, ok := freePath(c.schema, joinPath(path, c.step), depth+1); ok {
			return p, true
		}
	}
	return "", false
}

// guardingPattern is true for a pattern that admits no line break: every
// match is anchored at both ends of the text (^…$, not in multi-line
// mode) and no part of it matches a character YAML reads as a line break
// (\n, \r, U+0085, U+2028, U+2029).
func guardingPattern(p string) bool {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return false
	}
	return anchoredStart(re) && anchoredEnd(re) && !matchesBreak(re)
}

func anchoredStart(re *syntax.Regexp) bool {
	return anchored(re, syntax.OpBeginText, func(subs []*syntax.Regexp) *syntax.Regexp { return subs[0] })
}

func anchoredEnd(re *syntax.Regexp) bool {
	return anchored(re, syntax.OpEndText, func(subs []*syntax.Regexp) *syntax.Regexp { return subs[len(subs)-1] })
}

// anchored reports whether every match of re is anchored by op, looking
// into the sub-expression edge picks of a concatenation.
func anchored(re *syntax.Regexp, op syntax.Op, edge func([]*syntax.Regexp) *syntax.Regexp) bool {
	switch re.Op {
	case op:
		return true
	case syntax.OpConcat:
		return len(re.Sub) > 0 && anchored(edge(re.Sub), op, edge)
	case syntax.OpCapture:
		return anchored(re.Sub[0], op, edge)
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !anchored(s, op, edge) {
				return false
			}
		}
		return true
	}
	return false
}

// yamlBreaks are the characters YAML reads as line breaks.
var yamlBreaks = []rune{'\n', '\r', 0x85, 0x2028, 0x2029}

func matchesBreak(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if slices.Contains(yamlBreaks, r) {
				return true
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for _, b := range yamlBreaks {
				if re.Rune[i] <= b && b <= re.Rune[i+1] {
					return true
				}
			}
		}
	}
	for _, s := range re.Sub {
		if matchesBreak(s) {
			return true
		}
	}
	return false
}
