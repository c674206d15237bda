package conformance

// K4-unquoted-string: a template prints a free string of the values (one
// whose schema has no pattern or enum) without a quoting or typing
// function. A tenant's string holding a newline and "---" then starts a
// new manifest, and the release installs any object the tenant writes
// after it.
//
// The check is a Visitor of the shared walk (contracts/helmtemplate, which
// keeps the scopes, the dot and the defines followed): it follows values
// through the template as text/template would evaluate them, as far as it
// can know without running it: fields of
// .Values, variables, range and with, index/get/dig, list and dict
// (positions and literal keys kept, set included), toYaml/toJson then
// fromYaml/fromJson, and the defines a template includes, from the chart
// and its dependencies (cozy-lib), with their arguments. A define's output
// is what it prints: the include's result carries the free strings the
// define printed raw, so quoting the include's result is enough.

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart"

	"cozystack.io/contracts/helmtemplate"
)

// unquotedRule is the rule's ID.
const unquotedRule = "K4-unquoted-string"

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

// stringsAnalysis checks one chart's templates: the Visitor of the
// shared walk (contracts/helmtemplate) whose values are val.
type stringsAnalysis struct {
	helmtemplate.Base[val]
	chart   *loadedChart
	schema  any
	reserve []string
	w       *helmtemplate.Walker[val]
	// printing are the defines being walked, innermost last.
	printing []*printed
	seen     map[string]bool
	out      []Finding
}

// printed is what a define prints: the free strings it printed raw, and
// what it printed.
type printed struct {
	taint []source
	inner val
}

// checkUnquotedStrings reports K4-unquoted-string in the charts that have
// a values schema.
func checkUnquotedStrings(charts chartSet) []Finding {
	var out []Finding
	for _, p := range charts.paths() {
		c := charts[p]
		if c.schemaDoc == nil || c.schemaErr != nil {
			continue
		}
		out = append(out, analyzeStrings(c)...)
	}
	return out
}

func analyzeStrings(c *loadedChart) []Finding {
	a := &stringsAnalysis{chart: c, schema: c.schemaDoc, reserve: append(slices.Clone(PlatformKeys), c.dependencyKeys()...),
		seen: map[string]bool{}}
	// Dependencies first: the chart's own defines override theirs, as
	// Helm parses a parent's templates after its subcharts'.
	files := append(dependencyTemplates(c.path, c.chart), c.templates...)
	a.w = helmtemplate.New[val](a, files...)
	for _, f := range files[len(files)-len(c.templates):] {
		base := f.Name[strings.LastIndex(f.Name, "/")+1:]
		if strings.HasPrefix(base, "_") || base == "NOTES.txt" {
			continue // Helm installs nothing of these
		}
		a.w.Walk(f, f.Name, val{{kind: aRoot}})
	}
	return a.out
}

// dependencyTemplates parses the templates of c's dependencies, at every
// depth, named as files of the catalog (<chart>/charts/<dep>/templates/…).
func dependencyTemplates(chartPath string, c *chart.Chart) []*helmtemplate.File {
	var out []*helmtemplate.File
	for _, d := range c.Dependencies() {
		p := chartFile(chartPath, "charts/"+d.Name())
		out = append(out, dependencyTemplates(p, d)...)
		for _, t := range d.Templates {
			file := chartFile(p, t.Name)
			trees, err := parseTemplate(file, string(t.Data))
			if err != nil {
				continue // Helm reports it; K5 checks the library
			}
			out = append(out, &helmtemplate.File{Name: file, Text: string(t.Data), Trees: trees})
		}
	}
	return out
}

// Field is v.names.
func (a *stringsAnalysis) Field(_ *helmtemplate.Scope[val], _ parse.Node, base val, names []string) val {
	return a.fields(base, names)
}

// Literal is the text of a string or number constant.
func (a *stringsAnalysis) Literal(_ *helmtemplate.Scope[val], n parse.Node) val {
	switch n := n.(type) {
	case *parse.StringNode:
		return literal(n.Text)
	case *parse.NumberNode:
		return literal(n.Text)
	}
	return nil
}

// Call evaluates a function with its arguments; a method's result is not
// known.
func (a *stringsAnalysis) Call(_ *helmtemplate.Scope[val], c helmtemplate.Call[val]) val {
	if c.Name == "" {
		return nil
	}
	return a.call(c.Name, c.Args)
}

// Template is what {{template "name" arg}} prints.
func (a *stringsAnalysis) Template(_ *helmtemplate.Scope[val], n *parse.TemplateNode, arg val) val {
	return a.callDefine(n.Name, arg)
}

// Range binds the key and the element of what it ranges over, and walks
// its body twice: what one iteration assigns, the next one reads.
func (a *stringsAnalysis) Range(_ *helmtemplate.Scope[val], over val) helmtemplate.Range[val] {
	key, elem := a.rangeOf(over)
	return helmtemplate.Range[val]{Key: key, Elem: elem, Dot: elem, Passes: 2}
}

// Assign keeps both values: the analysis does not know which branch ran.
func (a *stringsAnalysis) Assign(old, v val) val { return union(old, v) }

// Print records a value a template or define writes to its output.
func (a *stringsAnalysis) Print(s *helmtemplate.Scope[val], n parse.Node, v val) {
	srcs := taintOf(v)
	file := s.File.Name
	line := s.File.Line(n.Position())
	if s.Define != "" {
		p := a.printing[len(a.printing)-1]
		for _, src := range srcs {
			if src.via == "" {
				src.via = fmt.Sprintf("include %q prints it at %s:%d", s.Define, file, line)
			}
			if !slices.Contains(p.taint, src) {
				p.taint = append(p.taint, src)
			}
		}
		for _, x := range v {
			if x.kind == aText && x.inner != nil {
				p.inner = union(p.inner, x.inner)
			} else {
				p.inner = union(p.inner, val{x})
			}
		}
		return
	}
	for _, src := range srcs {
		key := fmt.Sprintf("%s:%d:%s", file, line, src.path)
		if a.seen[key] {
			continue
		}
		a.seen[key] = true
		via := ""
		if src.via != "" {
			via = " (" + src.via + ")"
		}
		a.out = append(a.out, Finding{RuleID: unquotedRule, Severity: Error, File: file, Line: line, Path: src.path,
			Message: fmt.Sprintf("the template prints %s without quoting it%s, and its schema admits any string (no pattern, no enum): a value with a newline and \"---\" starts a new manifest, so a tenant adds any object to the release", src.path, via),
			Fix:     fmt.Sprintf("print it through quote (toJson, or toYaml/int of a typed value), or give %s a pattern anchored with ^…$ that admits no line break, or an enum, in values.schema.json and the AD's openAPISchema", src.path)})
	}
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

// callDefine evaluates a define with its argument; its value is the text
// it prints.
func (a *stringsAnalysis) callDefine(name string, arg val) val {
	p := &printed{}
	a.printing = append(a.printing, p)
	known, walked := a.w.Define(name, arg)
	a.printing = a.printing[:len(a.printing)-1]
	switch {
	case !known:
		return val{{kind: aText, taint: taintOf(arg)}}
	case !walked:
		return nil // recursion
	}
	return val{{kind: aText, taint: p.taint, inner: p.inner}}
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

// Schema navigation.

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
