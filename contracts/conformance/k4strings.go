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
// can know without running it (the values: k4values.go; the schemas:
// k4schema.go): fields of .Values, variables, range and with, index/get/dig, list and dict
// (positions and literal keys kept, set included), toYaml/toJson then
// fromYaml/fromJson, and the defines a template includes, from the chart
// and its dependencies (cozy-lib), with their arguments. A define's output
// is what it prints: the include's result carries the free strings the
// define printed raw, so quoting the include's result is enough.

import (
	"fmt"
	"slices"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart"

	"cozystack.io/contracts/helmtemplate"
)

// unquotedRule is the rule's ID.
const unquotedRule = "K4-unquoted-string"

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
