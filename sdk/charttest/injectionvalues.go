package charttest

// The values of the injection test (injection.go): a case's values with
// a string written at a target, the containers on its way made from the
// schema, and the harmless string of the baseline.

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// hasContainer is true when values hold every object on t's path (the
// field itself may be missing).
func hasContainer(values map[string]any, t Target) bool {
	var cur any = values
	path := t.Path
	if !t.Key && len(path) > 0 {
		path = path[:len(path)-1]
	}
	for _, p := range path {
		switch p {
		case "*":
			m, ok := cur.(map[string]any)
			if !ok || len(m) == 0 {
				return false
			}
			cur = m[slices.Sorted(maps.Keys(m))[0]]
		case "[]":
			l, ok := cur.([]any)
			if !ok || len(l) == 0 {
				return false
			}
			cur = l[0]
		default:
			m, ok := cur.(map[string]any)
			if !ok {
				return false
			}
			if cur, ok = m[p]; !ok {
				return false
			}
		}
	}
	_, isMap := cur.(map[string]any)
	return isMap || !t.Key && len(t.Path) > 0 && t.Path[len(t.Path)-1] == "[]"
}

// withString returns a deep copy of values with s written at t: the
// field set to s, or an entry added to the map under the key s (a copy
// of the map's first entry, else one made from the schema). The objects
// on the way are made from the schema when missing; an array's first
// item is used.
func withString(schema, values map[string]any, t Target, s string) (map[string]any, error) {
	root := deepCopy(values).(map[string]any)
	var cur any = root
	sch := any(schema)
	set := func(v any) {} // writes the current node into its parent
	for i, p := range t.Path {
		last := i == len(t.Path)-1
		child := schemaStep(sch, p)
		switch p {
		case "*":
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: not a map at %s", t, strings.Join(t.Path[:i], "."))
			}
			var key string
			if len(m) > 0 {
				key = slices.Sorted(maps.Keys(m))[0]
			} else {
				key = sample(schemaMapAt(sch, "propertyNames"), nil)
			}
			if last && !t.Key {
				m[key] = s
				return root, nil
			}
			if m[key] == nil {
				m[key] = synthesize(child)
			}
			set = func(v any) { m[key] = v }
			cur = m[key]
		case "[]":
			l, _ := cur.([]any)
			if len(l) == 0 {
				l = []any{synthesize(child)}
				set(l)
			}
			if last && !t.Key {
				l[0] = s
				return root, nil
			}
			set = func(v any) { l[0] = v }
			cur = l[0]
		default:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: not an object at %s", t, strings.Join(t.Path[:i], "."))
			}
			if last && !t.Key {
				m[p] = s
				return root, nil
			}
			if m[p] == nil {
				m[p] = synthesize(child)
			}
			name := p
			set = func(v any) { m[name] = v }
			cur = m[p]
		}
		sch = child
	}
	if !t.Key {
		return nil, fmt.Errorf("%s: an empty path", t)
	}
	m, ok := cur.(map[string]any)
	if !ok {
		m = map[string]any{}
		set(m)
	}
	var entry any
	if len(m) > 0 {
		entry = deepCopy(m[slices.Sorted(maps.Keys(m))[0]])
	} else {
		entry = synthesize(schemaStep(sch, "*"))
	}
	m[s] = entry
	return root, nil
}

// harmlessString is the string the baseline writes at t: the value the
// case holds there, else one the schema accepts.
func harmlessString(schema, values map[string]any, t Target) string {
	sch := any(schema)
	var cur any = values
	for _, p := range t.Path {
		sch = schemaStep(sch, p)
		switch p {
		case "*":
			if m, ok := cur.(map[string]any); ok && len(m) > 0 {
				cur = m[slices.Sorted(maps.Keys(m))[0]]
			} else {
				cur = nil
			}
		case "[]":
			if l, ok := cur.([]any); ok && len(l) > 0 {
				cur = l[0]
			} else {
				cur = nil
			}
		default:
			m, _ := cur.(map[string]any)
			cur = m[p]
		}
	}
	if t.Key {
		m, _ := cur.(map[string]any)
		return sample(schemaMapAt(sch, "propertyNames"), m)
	}
	switch v := cur.(type) {
	case string:
		return v
	case float64, int, int64:
		return fmt.Sprint(v)
	}
	return sample(stringBranch(sch), nil)
}

// schemaStep returns the schema of step p ("*", "[]" or a property) of s,
// looking into the branches of anyOf, oneOf and allOf.
func schemaStep(s any, p string) any {
	for _, b := range schemaBranches(s) {
		var next any
		switch p {
		case "*":
			next = b["additionalProperties"]
			if pp, _ := b["patternProperties"].(map[string]any); len(pp) > 0 {
				if _, ok := next.(map[string]any); !ok {
					next = pp[slices.Sorted(maps.Keys(pp))[0]]
				}
			}
		case "[]":
			next = b["items"]
		default:
			props, _ := b["properties"].(map[string]any)
			next = props[p]
		}
		if m, ok := next.(map[string]any); ok {
			return m
		}
	}
	return nil
}

func schemaBranches(s any) []map[string]any {
	m, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	out := []map[string]any{m}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if l, ok := m[kw].([]any); ok {
			for _, b := range l {
				out = append(out, schemaBranches(b)...)
			}
		}
	}
	return out
}

func schemaMapAt(s any, kw string) map[string]any {
	for _, b := range schemaBranches(s) {
		if m, ok := b[kw].(map[string]any); ok {
			return m
		}
	}
	return nil
}

// stringBranch returns the branch of s that admits a string.
func stringBranch(s any) map[string]any {
	for _, b := range schemaBranches(s) {
		if admitsString(b) || b["enum"] != nil {
			return b
		}
	}
	return nil
}

// synthesize makes the smallest value s accepts: an object with its
// required properties, an empty array, a scalar's default, enum value or
// sample.
func synthesize(s any) any {
	m, _ := s.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	if d, ok := m["default"]; ok {
		if _, isObj := d.(map[string]any); !isObj {
			if _, isList := d.([]any); !isList {
				return deepCopy(d)
			}
		}
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	switch t, _ := m["type"].(string); t {
	case "object":
		out := map[string]any{}
		req, _ := m["required"].([]any)
		for _, r := range req {
			if name, ok := r.(string); ok {
				out[name] = synthesize(schemaStep(m, name))
			}
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		if v, ok := m["minimum"]; ok {
			return v
		}
		return 1
	case "boolean":
		return false
	case "string":
		return sample(m, nil)
	}
	for _, b := range schemaBranches(m)[1:] {
		return synthesize(b)
	}
	return map[string]any{}
}

// samples are tried in order for a string the schema accepts.
var samples = []string{"inj", "x", "a1", "u1.medium", "1", "10Gi", "inj.example.org", "https://example.org/disk.img",
	"docker://example.org/disk:1", "10.0.0.0/24", "10.0.0.1", "nvidia.com/GPU", "inj-x"}

// sample returns a string s (a string schema, or propertyNames) accepts
// that is not a key of taken: the default, the first enum value, else
// the first of samples matching its pattern and lengths.
func sample(s map[string]any, taken map[string]any) string {
	ok := func(c string) bool {
		if _, dup := taken[c]; dup {
			return false
		}
		if s == nil {
			return true
		}
		if p, isStr := s["pattern"].(string); isStr {
			re, err := regexp.Compile(p)
			if err != nil || !re.MatchString(c) {
				return false
			}
		}
		if n, isNum := s["maxLength"].(float64); isNum && float64(len(c)) > n {
			return false
		}
		if n, isNum := s["minLength"].(float64); isNum && float64(len(c)) < n {
			return false
		}
		return true
	}
	if s != nil {
		if d, isStr := s["default"].(string); isStr && d != "" && ok(d) {
			return d
		}
		if e, isList := s["enum"].([]any); isList {
			for _, v := range e {
				if str, isStr := v.(string); isStr && ok(str) {
					return str
				}
			}
		}
	}
	for _, c := range samples {
		if ok(c) {
			return c
		}
	}
	return "inj"
}
