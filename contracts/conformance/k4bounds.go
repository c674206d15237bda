package conformance

import (
	"fmt"
	"regexp/syntax"
	"slices"
)

// unboundedFindings applies K4-unbounded to an application chart's values
// schema (k4-values.md, "Bounded values"): every string has a maxLength
// (or an enum, a const, or a pattern that bounds its length), every map
// (an object whose additionalProperties or patternProperties is a schema)
// a maxProperties and propertyNames that bound its keys the same way, and
// every array a maxItems. A tenant writes these
// values; each byte is stored in the HelmRelease, again in what the chart
// renders and in every backup snapshot, and each map entry or array item
// may render objects of its own, so an unbounded field lets one request
// cost the platform without limit (a 1,000,000-character
// cloudInit; a 7.6 KB Postgres request that made 402 objects).
func unboundedFindings(c *loadedChart, props map[string]any, skip []string) []Finding {
	file := c.schemaFile()
	var out []Finding
	for _, k := range sortedKeys(props) {
		if slices.Contains(skip, k) {
			continue
		}
		walkStrict(props[k], []string{"properties", k}, func(node map[string]any, at []string) {
			msg, fix := unbounded(node)
			if msg == "" {
				return
			}
			out = append(out, Finding{RuleID: "K4-unbounded", Severity: Error, File: file, Line: c.schemaPos.line(at...), Path: pointer(at...),
				Message: fmt.Sprintf("%s at %s %s: one request may store any amount there, and every copy of the values (the HelmRelease, what the chart renders, each backup's snapshot) costs the platform as much", kindOf(node), valuePath(at), msg),
				Fix:     fix})
		})
	}
	return out
}

// kindOf names the unbounded node for a message.
func kindOf(node map[string]any) string {
	switch {
	case hasType(node, "array"):
		return "the array"
	case hasType(node, "object"):
		return "the map"
	}
	return "the string"
}

// unbounded returns, for a subschema with no bound on its size, what is
// missing and the fix; "" when it is bounded or not a string, map or
// array.
func unbounded(node map[string]any) (string, string) {
	_, enum := node["enum"]
	_, konst := node["const"]
	switch {
	case hasType(node, "string") && !enum && !konst && node["maxLength"] == nil:
		if p, ok := node["pattern"].(string); ok && patternBounded(p) {
			return "", ""
		}
		return "has no maxLength (nor an enum, a const or a pattern anchored with ^ and $ and without *, + or {n,})",
			"add \"maxLength\": the longest value the application needs (e.g. 253 for a name, 64 for a quantity, 65536 for a document)"
	case hasType(node, "object") && isMapSchema(node) && node["maxProperties"] == nil:
		return "has no maxProperties", "add \"maxProperties\": the most entries the application needs (e.g. 32 users)"
	case hasType(node, "object") && isMapSchema(node) && !keysBounded(node):
		return "has keys of any length (no propertyNames with a maxLength or a bounding pattern)",
			"add \"propertyNames\": {\"maxLength\": 63} (or a pattern such as ^[a-z][a-z0-9]{0,30}$)"
	case hasType(node, "array") && node["maxItems"] == nil:
		return "has no maxItems", "add \"maxItems\": the most items the application needs (e.g. 16 disks)"
	}
	return "", ""
}

// hasType is true when a schema's type is t or a list that holds it.
func hasType(s map[string]any, t string) bool {
	switch v := s["type"].(type) {
	case string:
		return v == t
	case []any:
		return slices.Contains(v, any(t))
	}
	return false
}

// isMapSchema is true for an object whose keys are not all listed: its
// additionalProperties or patternProperties is a schema. A patternProperties
// map is refused by K1 first, but K1 does not run on a catalog checked
// without its ApplicationDefinitions (k4-values.md, rules 4 and 8).
func isMapSchema(node map[string]any) bool {
	if m, ok := node["additionalProperties"].(map[string]any); ok && len(m) > 0 {
		return true
	}
	if m, ok := node["additionalProperties"].(bool); ok && m {
		return true
	}
	pp, ok := node["patternProperties"].(map[string]any)
	return ok && len(pp) > 0
}

// keysBounded is true when a map's propertyNames bound the keys' length.
func keysBounded(node map[string]any) bool {
	pn, ok := node["propertyNames"].(map[string]any)
	if !ok {
		return false
	}
	if pn["maxLength"] != nil || pn["enum"] != nil || pn["const"] != nil {
		return true
	}
	p, ok := pn["pattern"].(string)
	return ok && patternBounded(p)
}

// patternBounded reports whether every string matching the regular
// expression p has a bounded length: it is anchored at both ends (^…$,
// in each alternative) and repeats nothing without an upper bound. A
// pattern Go cannot parse is unbounded (JSON Schema patterns are
// ECMA-262; the common subset is what charts use).
func patternBounded(p string) bool {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return false
	}
	return anchoredBothEnds(re) && finite(re)
}

func anchoredBothEnds(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if !anchoredBothEnds(s) {
				return false
			}
		}
		return len(re.Sub) > 0
	case syntax.OpCapture:
		return anchoredBothEnds(re.Sub[0])
	case syntax.OpConcat:
		n := len(re.Sub)
		if n < 2 {
			return false
		}
		first, last := re.Sub[0].Op, re.Sub[n-1].Op
		return (first == syntax.OpBeginText || first == syntax.OpBeginLine) && (last == syntax.OpEndText || last == syntax.OpEndLine)
	}
	return false
}

func finite(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus:
		return false
	case syntax.OpRepeat:
		if re.Max < 0 {
			return false
		}
	}
	for _, s := range re.Sub {
		if !finite(s) {
			return false
		}
	}
	return true
}
