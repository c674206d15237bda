package conformance

// The values of the K4-unquoted-string analysis (k4strings.go): what a
// template expression may evaluate to, and how Helm's functions combine
// them.

import (
	"slices"
	"strconv"
)

// sanitizers are the functions whose result holds no line break of their
// arguments: quoting, JSON, numbers, booleans, hashes and encodings.
var sanitizers = map[string]bool{
	"quote": true, "squote": true, "toJson": true, "toRawJson": true, "toPrettyJson": true, "mustToJson": true,
	"mustToRawJson": true, "mustToPrettyJson": true, "urlquery": true,
	"int": true, "int64": true, "float64": true, "atoi": true, "toDecimal": true, "len": true,
	"add": true, "add1": true, "sub": true, "mul": true, "div": true, "mod": true, "max": true, "min": true,
	"maxf": true, "minf": true, "addf": true, "subf": true, "mulf": true, "divf": true, "add1f": true,
	"floor": true, "ceil": true, "round": true, "until": true, "untilStep": true, "seq": true,
	"b64enc": true, "b32enc": true, "sha1sum": true, "sha256sum": true, "sha512sum": true, "adler32sum": true,
	"htpasswd": true, "bcrypt": true, "derivePassword": true,
	"randAlphaNum": true, "randAlpha": true, "randNumeric": true, "randAscii": true, "randBytes": true, "uuidv4": true,
	"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true, "not": true, "empty": true,
	"has": true, "hasKey": true, "hasPrefix": true, "hasSuffix": true, "contains": true,
	"regexMatch": true, "mustRegexMatch": true, "kindIs": true, "typeIs": true, "typeIsLike": true,
	"kindOf": true, "typeOf": true, "semverCompare": true, "isAbs": true, "deepEqual": true,
	"now": true, "date": true, "dateInZone": true, "unixEpoch": true, "fail": true, "lookup": true,
}

// yamlSanitizers serialize a typed value safely; a bare string they
// print as a block scalar that may leave its indentation.
var yamlSanitizers = map[string]bool{"toYaml": true, "mustToYaml": true, "toYamlPretty": true, "toToml": true}

// serializers keep what they serialize for fromYaml/fromJson.
var serializers = map[string]bool{
	"toYaml": true, "mustToYaml": true, "toYamlPretty": true, "toJson": true, "toRawJson": true,
	"toPrettyJson": true, "mustToJson": true, "mustToRawJson": true, "mustToPrettyJson": true,
}

var deserializers = map[string]bool{
	"fromYaml": true, "fromJson": true, "fromYamlArray": true, "fromJsonArray": true, "mustFromJson": true,
}

// source is a free string of the values reaching a printed value.
type source struct {
	// path is the values path: users.*.password, resourceQuotas.<key>,
	// disks[].name.
	path string
	// via says which define printed it raw, when one did.
	via string
}

type altKind int

const (
	aRoot   altKind = iota // a root context ($ of a template)
	aValues                // .Values
	aNode                  // a value of .Values, described by a subschema
	aList                  // a list, by position
	aDict                  // a dict
	aText                  // a string the template computed
)

// alt is one thing a template expression may evaluate to.
type alt struct {
	kind altKind
	// aNode: the subschema (nil: unconstrained) and the values path;
	// key is true for a key of the map the schema describes.
	schema any
	path   string
	key    bool
	// aList
	elems []val
	// aDict
	dict *dictVal
	// aText: the free strings it holds raw, what it serializes (toYaml,
	// toJson, a define's output) and, for a literal, its text.
	taint []source
	inner val
	lit   *string
}

// val is what an expression may evaluate to: any of its alternatives.
type val []*alt

type dictVal struct {
	fields map[string]val
	// dyn are the values set under keys the analysis does not know, keys
	// the free strings those keys hold.
	dyn  val
	keys []source
}

func union(vs ...val) val {
	var out val
	for _, v := range vs {
		for _, a := range v {
			if a != nil && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

func literal(s string) val { return val{{kind: aText, lit: &s}} }

// lit returns the literal text of v when it is exactly one literal.
func (v val) lit() (string, bool) {
	if len(v) == 1 && v[0].kind == aText && v[0].lit != nil {
		return *v[0].lit, true
	}
	return "", false
}

func (a *stringsAnalysis) fields(v val, names []string) val {
	for _, n := range names {
		v = a.field(v, n)
	}
	return v
}

// field is v.name (and index v "name").
func (a *stringsAnalysis) field(v val, name string) val {
	var out val
	for _, x := range v {
		switch x.kind {
		case aRoot:
			if name == "Values" {
				out = append(out, &alt{kind: aValues})
			}
		case aValues:
			if slices.Contains(a.reserve, name) {
				continue // the platform's and the dependencies' values
			}
			for _, s := range childSchemas(a.schema, name) {
				out = append(out, &alt{kind: aNode, schema: s.schema, path: joinPath("", name)})
			}
		case aNode:
			if x.key {
				continue
			}
			for _, s := range childSchemas(x.schema, name) {
				out = append(out, &alt{kind: aNode, schema: s.schema, path: joinPath(x.path, s.step)})
			}
		case aDict:
			if fv, ok := x.dict.fields[name]; ok {
				out = union(out, fv)
			}
			out = union(out, a.field(x.dict.dyn, name))
		}
	}
	return out
}

// anyChild is v[k] for a key k the analysis does not know.
func (a *stringsAnalysis) anyChild(v val) val {
	var out val
	for _, x := range v {
		switch x.kind {
		case aValues:
			for _, k := range sortedKeys(schemaMapOf(schemaMapOf(a.schema)["properties"])) {
				out = union(out, a.field(val{x}, k))
			}
		case aNode:
			if x.key {
				continue
			}
			for _, s := range allChildSchemas(x.schema) {
				out = append(out, &alt{kind: aNode, schema: s.schema, path: joinPath(x.path, s.step)})
			}
		case aList:
			out = union(out, union(x.elems...))
		case aDict:
			for _, k := range sortedKeys(toAnyVal(x.dict.fields)) {
				out = union(out, x.dict.fields[k])
			}
			out = union(out, x.dict.dyn)
		case aText:
			out = append(out, x) // a character of a string
		}
	}
	return out
}

func (a *stringsAnalysis) index(v val, keys []val) val {
	for _, k := range keys {
		s, ok := k.lit()
		if !ok {
			v = a.anyChild(v)
			continue
		}
		var next val
		for _, x := range v {
			if x.kind == aList {
				if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(x.elems) {
					next = union(next, x.elems[i])
				} else {
					next = union(next, a.anyChild(val{x}))
				}
				continue
			}
			if x.kind == aNode && !x.key {
				if _, err := strconv.Atoi(s); err == nil && isArraySchema(x.schema) {
					next = union(next, a.anyChild(val{x}))
					continue
				}
			}
			next = union(next, a.field(val{x}, s))
		}
		v = next
	}
	return v
}

// rangeOf returns the key and the element of range over v.
func (a *stringsAnalysis) rangeOf(v val) (key, elem val) {
	for _, x := range v {
		switch x.kind {
		case aNode:
			if x.key {
				elem = append(elem, x)
				continue
			}
			elem = union(elem, a.anyChild(val{x}))
			if keyFree(x.schema) {
				key = append(key, &alt{kind: aNode, key: true, schema: x.schema, path: x.path})
			}
		case aValues, aList:
			elem = union(elem, a.anyChild(val{x}))
		case aDict:
			elem = union(elem, a.anyChild(val{x}))
			if len(x.dict.keys) > 0 {
				key = append(key, &alt{kind: aText, taint: x.dict.keys})
			}
		case aText:
			if x.inner != nil {
				k, e := a.rangeOf(x.inner)
				key, elem = union(key, k), union(elem, e)
			} else {
				elem = append(elem, x)
			}
		}
	}
	return key, elem
}

// call evaluates a function (or include) with its arguments (the piped
// value last).
func (a *stringsAnalysis) call(name string, args []val) val {
	switch {
	case name == "include":
		if len(args) == 0 {
			return nil
		}
		var arg val
		if len(args) > 1 {
			arg = args[1]
		}
		if tname, ok := args[0].lit(); ok {
			return a.callDefine(tname, arg)
		}
		return val{{kind: aText, taint: taintOf(union(args...))}}
	case name == "tpl":
		if len(args) > 0 {
			return val{{kind: aText, taint: taintOf(args[0])}}
		}
		return nil
	case yamlSanitizers[name]:
		var inner val
		var taint []source
		for _, v := range args {
			inner = union(inner, v)
			for _, x := range v {
				if x.kind == aText || x.kind == aNode && (x.key || freeString(x.schema)) {
					taint = appendSources(taint, taintOf(val{x}))
				}
			}
		}
		return val{{kind: aText, taint: taint, inner: inner}}
	case sanitizers[name]:
		if serializers[name] {
			return val{{kind: aText, inner: union(args...)}}
		}
		return nil
	case deserializers[name]:
		var out val
		for _, v := range args {
			for _, x := range v {
				if x.kind == aText && x.inner != nil {
					out = union(out, x.inner)
				} else if x.kind == aText && x.lit != nil {
					continue // a literal document: the chart's own text
				} else {
					out = append(out, x)
				}
			}
		}
		return out
	}
	switch name {
	case "list", "tuple":
		return val{{kind: aList, elems: slices.Clone(args)}}
	case "dict":
		d := &dictVal{fields: map[string]val{}}
		for i := 0; i+1 < len(args); i += 2 {
			d.set(args[i], args[i+1])
		}
		return val{{kind: aDict, dict: d}}
	case "set":
		if len(args) == 3 {
			for _, x := range args[0] {
				if x.kind == aDict {
					x.dict.set(args[1], args[2])
				}
			}
		}
		if len(args) > 0 {
			return args[0]
		}
		return nil
	case "index":
		if len(args) == 0 {
			return nil
		}
		return a.index(args[0], args[1:])
	case "get":
		if len(args) != 2 {
			return nil
		}
		return a.index(args[0], args[1:2])
	case "dig":
		if len(args) < 3 {
			return nil
		}
		return union(a.index(args[len(args)-1], args[:len(args)-2]), args[len(args)-2])
	case "keys":
		var out val
		for _, v := range args {
			k, _ := a.rangeOf(v)
			if k != nil {
				out = append(out, &alt{kind: aList, elems: []val{k}})
			}
		}
		return out
	case "values", "first", "last", "mustFirst", "mustLast":
		var out val
		for _, v := range args {
			out = union(out, a.anyChild(v))
		}
		return out
	case "append", "mustAppend", "push", "mustPush", "prepend", "mustPrepend":
		if len(args) != 2 {
			return union(args...)
		}
		var elems []val
		for _, x := range args[0] {
			if x.kind == aList {
				elems = append(elems, x.elems...)
			} else {
				elems = append(elems, a.anyChild(val{x}))
			}
		}
		return val{{kind: aList, elems: append(elems, args[1])}}
	case "required":
		if len(args) > 0 {
			return args[len(args)-1]
		}
		return nil
	case "ternary":
		if len(args) >= 2 {
			return union(args[0], args[1])
		}
		return nil
	}
	// Anything else (printf, default, trim, join, toString, …) may return
	// any part of its arguments.
	return union(args...)
}

func (d *dictVal) set(k, v val) {
	if s, ok := k.lit(); ok {
		d.fields[s] = union(d.fields[s], v)
		return
	}
	d.dyn = union(d.dyn, v)
	d.keys = appendSources(d.keys, taintOf(k))
}

// taintOf returns the free strings v holds.
func taintOf(v val) []source {
	var out []source
	seen := map[*dictVal]bool{}
	var walk func(v val, depth int)
	walk = func(v val, depth int) {
		if depth > 32 {
			return
		}
		for _, x := range v {
			switch x.kind {
			case aNode:
				if x.key {
					if keyFree(x.schema) {
						out = appendSources(out, []source{{path: x.path + ".<key>"}})
					}
				} else if p, ok := freePath(x.schema, x.path, 0); ok {
					out = appendSources(out, []source{{path: p}})
				}
			case aList:
				for _, e := range x.elems {
					walk(e, depth+1)
				}
			case aDict:
				if seen[x.dict] {
					continue
				}
				seen[x.dict] = true
				for _, k := range sortedKeys(toAnyVal(x.dict.fields)) {
					walk(x.dict.fields[k], depth+1)
				}
				walk(x.dict.dyn, depth+1)
				out = appendSources(out, x.dict.keys)
			case aText:
				out = appendSources(out, x.taint)
			}
		}
	}
	walk(v, 0)
	return out
}

func appendSources(to, from []source) []source {
	for _, s := range from {
		if !slices.ContainsFunc(to, func(t source) bool { return t.path == s.path }) {
			to = append(to, s)
		}
	}
	return to
}

func toAnyVal(m map[string]val) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
