package helm

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template/parse"

	"cozystack.io/contracts/helmtemplate"
)

// refKind is what a template reference points at.
type refKind int

const (
	refInclude      refKind = iota // include "x" / template "x": a template name
	refLookup                      // lookup "group/version" ...: an API group
	refCapabilities                // .Capabilities.APIVersions.Has "group/version[/Kind]"
	refAPIVersion                  // apiVersion: group/version in the YAML text
)

// ref is one reference found in a template file. A reference whose
// argument is not a string literal keeps the expression, resolved against
// the chart (see evalContext) when its edges are made; text is then the
// whole call, for a finding when it does not resolve.
type ref struct {
	kind  refKind
	value string // template name, or group/version (with " Kind" for lookups and refAPIVersion when known)
	line  int

	expr       parse.Node // the argument, when not a literal
	suffix     string     // appended to the resolved expression (a lookup's " Kind")
	dotRoot    bool       // . is the chart's root context where expr is
	dollarRoot bool       // $ is the chart's root context where expr is
	dynamic    bool       // found by the regex scan with a non-literal argument: never resolved
	text       string     // the call, for expr and dynamic
}

// resolve returns the reference's value in chart ctx, and false when its
// argument is computed from something only rendering knows.
func (r ref) resolve(ctx evalContext) (string, bool) {
	switch {
	case r.dynamic:
		return "", false
	case r.expr == nil:
		return r.value, true
	}
	ctx.dotRoot, ctx.dollarRoot = r.dotRoot, r.dollarRoot
	v, ok := eval(r.expr, ctx)
	if !ok {
		return "", false
	}
	return v + r.suffix, true
}

// evalContext is what a template argument may be computed from and the
// linter still knows: string literals, print and printf of them, the
// chart's name and its templates' base path (the idiom
// `include (print $.Template.BasePath "/config.yaml") .`). Anything else
// (values, variables, other functions) is known only when the chart renders.
type evalContext struct {
	chartName, basePath string
	// . and $ are the chart's root context: outside defines (whose
	// argument is whatever the caller passes) and, for ., outside with and
	// range.
	dotRoot, dollarRoot bool
}

func eval(n parse.Node, ctx evalContext) (string, bool) {
	switch n := n.(type) {
	case *parse.StringNode:
		return n.Text, true
	case *parse.PipeNode:
		if n == nil || len(n.Decl) > 0 || len(n.Cmds) != 1 {
			return "", false
		}
		return eval(n.Cmds[0], ctx)
	case *parse.CommandNode:
		if len(n.Args) == 1 {
			return eval(n.Args[0], ctx)
		}
		id, ok := n.Args[0].(*parse.IdentifierNode)
		if !ok || (id.Ident != "print" && id.Ident != "printf") {
			return "", false
		}
		args := make([]any, 0, len(n.Args)-1)
		for _, a := range n.Args[1:] {
			v, ok := eval(a, ctx)
			if !ok {
				return "", false
			}
			args = append(args, v)
		}
		if id.Ident == "print" {
			return fmt.Sprint(args...), true
		}
		return fmt.Sprintf(args[0].(string), args[1:]...), true
	case *parse.FieldNode:
		if ctx.dotRoot {
			return ctx.field(n.Ident)
		}
	case *parse.VariableNode:
		if ctx.dollarRoot && len(n.Ident) > 1 && n.Ident[0] == "$" {
			return ctx.field(n.Ident[1:])
		}
	}
	return "", false
}

func (ctx evalContext) field(idents []string) (string, bool) {
	switch strings.Join(idents, ".") {
	case "Chart.Name":
		return ctx.chartName, ctx.chartName != ""
	case "Template.BasePath":
		return ctx.basePath, ctx.basePath != ""
	}
	return "", false
}

// define is one `define "name"` (or `block "name"`) of a template file.
type define struct {
	name string
	line int
}

// templateFile is what one template file defines and references. When it
// failed to parse, err says why and the refs and defines come from a regex
// scan instead of the syntax tree.
type templateFile struct {
	rel     string
	inner   string // path inside the chart: templates/...
	defines []define
	refs    []ref
	err     error
	errLine int
}

var (
	funcs = funcMap()

	apiVersionRE = regexp.MustCompile(`(?m)^[ \t]*(?:-[ \t]+)?apiVersion:[ \t]*["']?([A-Za-z0-9.-]+/[A-Za-z0-9]+)["']?[ \t]*(?:#.*)?$`)
	kindRE       = regexp.MustCompile(`(?m)^[ \t]*(?:-[ \t]+)?kind:[ \t]*["']?([A-Za-z0-9]+)["']?[ \t]*(?:#.*)?$`)
	docSepRE     = regexp.MustCompile(`(?m)^---`)
	errLineRE    = regexp.MustCompile(`:(\d+):`)
	versionRE    = regexp.MustCompile(`^v\d+(?:(?:alpha|beta)\d+)?$`)

	// The fallback scan, used only on a file that does not parse.
	actionRE  = regexp.MustCompile(`(?s)\{\{.*?\}\}`)
	includeRE = regexp.MustCompile(`\b(?:include|template)\s+"((?:[^"\\]|\\.)*)"`)
	defineRE  = regexp.MustCompile(`\b(?:define|block)\s+"((?:[^"\\]|\\.)*)"`)
	lookupRE  = regexp.MustCompile(`\blookup\s+"([^"]*)"(?:\s+"([^"]+)")?`)
	hasRE     = regexp.MustCompile(`\bAPIVersions\.Has\s+"([^"]*)"`)
	// A call whose argument is not a string literal.
	dynamicRE = []struct {
		kind refKind
		re   *regexp.Regexp
	}{
		{refInclude, regexp.MustCompile(`\binclude\s+[($.]`)},
		{refLookup, regexp.MustCompile(`\blookup\s+[($.]`)},
		{refCapabilities, regexp.MustCompile(`\bAPIVersions\.Has\s+[($.]`)},
		{refCapabilities, regexp.MustCompile(`[\w)]\s*\|\s*\S*APIVersions\.Has\b`)},
	}
	pipeHasRE  = regexp.MustCompile(`"([^"]*)"\s*\|\s*\S*APIVersions\.Has\b`)
	defineAtRE = `\{\{-?\s*(?:define|block)\s+"%s"`
)

// parseTemplate reads one template file with text/template/parse and Helm's
// function names, and walks its syntax tree (the file's body and every
// define) for includes, lookups, capability checks and apiVersion lines.
func parseTemplate(rel string, text string) *templateFile {
	tf := &templateFile{rel: rel}
	lines := newLineIndex(text)
	f, err := helmtemplate.Parse(rel, text, funcs)
	if err != nil {
		tf.err = err
		tf.errLine = 1
		if m := errLineRE.FindStringSubmatch(err.Error()); m != nil {
			tf.errLine, _ = strconv.Atoi(m[1])
		}
		scanRegex(tf, text, lines)
		return tf
	}
	v := &refVisitor{tf: tf, lines: lines}
	w := helmtemplate.New[bool](v)
	for _, name := range f.TreeNames() {
		if name != rel {
			tree := f.Trees[name]
			line := lines.line(int(tree.Root.Position()))
			if loc := regexp.MustCompile(fmt.Sprintf(defineAtRE, regexp.QuoteMeta(name))).FindStringIndex(text); loc != nil {
				line = lines.line(loc[0])
			}
			tf.defines = append(tf.defines, define{name, line})
		}
		// . and $ are the chart's root context in the file's body; a
		// define's are whatever its caller passes.
		w.Walk(f, name, name == rel)
	}
	sort.SliceStable(tf.refs, func(i, j int) bool { return tf.refs[i].line < tf.refs[j].line })
	return tf
}

// refVisitor collects references as a Visitor of the shared walk
// (cozystack.io/contracts/helmtemplate). Its value is whether an
// expression is the chart's root context: true for . and $ of a file's
// body, false inside with and range and in defines.
type refVisitor struct {
	helmtemplate.Base[bool]
	tf    *templateFile
	lines lineIndex
}

func (v *refVisitor) add(kind refKind, value string, pos parse.Pos) {
	v.tf.refs = append(v.tf.refs, ref{kind: kind, value: value, line: v.lines.line(int(pos))})
}

// addArg adds a reference whose argument is arg, in the call whole.
func (v *refVisitor) addArg(s *helmtemplate.Scope[bool], kind refKind, arg parse.Node, suffix string, whole parse.Node) {
	if str, ok := arg.(*parse.StringNode); ok {
		v.add(kind, str.Text+suffix, str.Pos)
		return
	}
	v.tf.refs = append(v.tf.refs, ref{kind: kind, line: v.lines.line(int(arg.Position())), expr: arg, suffix: suffix,
		dotRoot: s.Dot, dollarRoot: s.Dollar, text: whole.String()})
}

// With and Range give their bodies another dot.
func (v *refVisitor) With(*helmtemplate.Scope[bool], bool) bool { return false }

func (v *refVisitor) Template(_ *helmtemplate.Scope[bool], n *parse.TemplateNode, _ bool) bool {
	v.add(refInclude, n.Name, n.Pos)
	return false
}

func (v *refVisitor) Text(_ *helmtemplate.Scope[bool], n *parse.TextNode) {
	v.yamlText(string(n.Text), int(n.Pos))
}

// Call finds include "x", lookup "group/version" "Kind",
// .Capabilities.APIVersions.Has "group/version" and
// "group/version" | .Capabilities.APIVersions.Has.
func (v *refVisitor) Call(s *helmtemplate.Scope[bool], c helmtemplate.Call[bool]) bool {
	if c.Node == nil {
		return false
	}
	args := c.Node.Args
	switch {
	case c.Name == "include" && len(args) >= 2:
		v.addArg(s, refInclude, args[1], "", c.Node)
	case c.Name == "lookup" && len(args) >= 2:
		suffix := ""
		if len(args) >= 3 {
			if kind, ok := args[2].(*parse.StringNode); ok && kind.Text != "" {
				suffix = " " + kind.Text
			}
		}
		v.addArg(s, refLookup, args[1], suffix, c.Node)
	case c.Name == "" && len(args) >= 2 && isHas(args[0]):
		v.addArg(s, refCapabilities, args[1], "", c.Node)
	case c.Name == "" && c.Piped && len(args) == 1 && isHas(args[0]):
		var arg parse.Node = c.Pipe.Cmds[c.Index-1]
		if prev := c.Pipe.Cmds[c.Index-1]; len(prev.Args) == 1 {
			arg = prev.Args[0]
		}
		v.addArg(s, refCapabilities, arg, "", c.Pipe)
	}
	return false
}

// isHas reports whether n is a field path ending in APIVersions.Has:
// .Capabilities.APIVersions.Has, $.Capabilities..., $caps.APIVersions.Has.
func isHas(n parse.Node) bool {
	var idents []string
	switch n := n.(type) {
	case *parse.FieldNode:
		idents = n.Ident
	case *parse.VariableNode:
		idents = n.Ident
	case *parse.ChainNode:
		idents = n.Field
		if len(idents) < 2 {
			if f, ok := n.Node.(*parse.FieldNode); ok {
				idents = append(append([]string{}, f.Ident...), idents...)
			}
		}
	}
	k := len(idents)
	return k >= 2 && idents[k-2] == "APIVersions" && idents[k-1] == "Has"
}

// yamlText finds `apiVersion: group/version` lines in literal template
// text starting at byte offset base of the file, with the kind of the same
// YAML document when the text holds it.
func (v *refVisitor) yamlText(text string, base int) {
	for _, m := range apiVersionRE.FindAllStringSubmatchIndex(text, -1) {
		value := text[m[2]:m[3]]
		if kind := kindNear(text, m[0]); kind != "" {
			value += " " + kind
		}
		v.tf.refs = append(v.tf.refs, ref{kind: refAPIVersion, value: value, line: v.lines.line(base + m[2])})
	}
}

// kindNear returns the `kind:` of the YAML document around offset at: the
// first one after it, else the last one before it, not crossing `---`.
func kindNear(text string, at int) string {
	start, end := 0, len(text)
	for _, s := range docSepRE.FindAllStringIndex(text, -1) {
		if s[0] <= at {
			start = s[1]
		} else if s[0] < end {
			end = s[0]
			break
		}
	}
	if m := kindRE.FindStringSubmatch(text[at:end]); m != nil {
		return m[1]
	}
	if all := kindRE.FindAllStringSubmatch(text[start:at], -1); len(all) > 0 {
		return all[len(all)-1][1]
	}
	return ""
}

// scanRegex is the fallback for a file that does not parse: references and
// defines inside {{ }} actions, apiVersion lines outside them.
func scanRegex(tf *templateFile, text string, lines lineIndex) {
	w := &refVisitor{tf: tf, lines: lines}
	prev := 0
	for _, a := range actionRE.FindAllStringIndex(text, -1) {
		w.yamlText(text[prev:a[0]], prev)
		prev = a[1]
		action := text[a[0]:a[1]]
		for _, m := range defineRE.FindAllStringSubmatchIndex(action, -1) {
			tf.defines = append(tf.defines, define{action[m[2]:m[3]], lines.line(a[0] + m[0])})
		}
		for _, p := range []struct {
			re   *regexp.Regexp
			kind refKind
		}{{includeRE, refInclude}, {lookupRE, refLookup}, {hasRE, refCapabilities}, {pipeHasRE, refCapabilities}} {
			for _, m := range p.re.FindAllStringSubmatchIndex(action, -1) {
				value := action[m[2]:m[3]]
				if len(m) > 4 && m[4] >= 0 {
					value += " " + action[m[4]:m[5]] // a lookup's kind
				}
				tf.refs = append(tf.refs, ref{kind: p.kind, value: value, line: lines.line(a[0] + m[2])})
			}
		}
		for _, d := range dynamicRE {
			for _, m := range d.re.FindAllStringIndex(action, -1) {
				tf.refs = append(tf.refs, ref{kind: d.kind, dynamic: true, line: lines.line(a[0] + m[0]),
					text: strings.TrimSpace(strings.Trim(action, "{}-"))})
			}
		}
	}
	w.yamlText(text[prev:], prev)
	sort.SliceStable(tf.refs, func(i, j int) bool { return tf.refs[i].line < tf.refs[j].line })
}

// lineIndex maps byte offsets to 1-based line numbers.
type lineIndex []int

func newLineIndex(text string) lineIndex {
	idx := lineIndex{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

func (l lineIndex) line(offset int) int {
	return sort.Search(len(l), func(i int) bool { return l[i] > offset })
}

// groupOf returns the API group of "group/version", "group/version/Kind"
// or "version" (the core group, ""), ignoring a trailing " Kind".
func groupOf(apiVersion string) string {
	apiVersion, _, _ = strings.Cut(apiVersion, " ")
	group, _, found := strings.Cut(apiVersion, "/")
	if !found || versionRE.MatchString(group) {
		return "" // "v1", "v1/Pod"
	}
	return group
}
