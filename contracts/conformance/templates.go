package conformance

import (
	"slices"
	"text/template/parse"

	"cozystack.io/contracts/helmtemplate"
	"cozystack.io/contracts/valuesschema"
)

// valueRead is a read of a top-level "_" value in a template:
// .Values._cluster.root-host is {object: _cluster, key: root-host}.
type valueRead struct {
	object, key, sub string
	line             int
	// via is how it was read, for messages.
	via string
}

// includeCall is an include (or template) of a named template.
type includeCall struct {
	name string
	line int
	// arg is the include's argument, nil for none.
	arg parse.Node
}

type refKind int

const (
	refNone   refKind = iota
	refRoot           // the root context ($)
	refValues         // .Values
	refObject         // .Values._x, with keys below it
)

// ref is what a template expression evaluates to, as far as K2 cares.
type ref struct {
	kind   refKind
	object string
	keys   []string
}

func (r ref) field(names ...string) ref {
	for _, n := range names {
		switch r.kind {
		case refRoot:
			if n != "Values" {
				return ref{}
			}
			r = ref{kind: refValues}
		case refValues:
			if !valuesschema.IsPlatformKey(n) {
				return ref{}
			}
			r = ref{kind: refObject, object: n}
		case refObject:
			r = ref{kind: refObject, object: r.object, keys: append(slices.Clone(r.keys), n)}
		default:
			return ref{}
		}
	}
	return r
}

// cozyLibReaders are the cozy-lib helpers whose first list item is the
// K2 key they read (K5).
var cozyLibReaders = map[string]string{
	"cozy-lib.cluster.required":   "_cluster",
	"cozy-lib.cluster.optional":   "_cluster",
	"cozy-lib.namespace.required": "_namespace",
	"cozy-lib.namespace.optional": "_namespace",
}

// k2Visitor collects the reads and includes of one template file as the
// shared walk (contracts/helmtemplate) evaluates it: each tree of the file
// on its own, with the root context as its . and $.
type k2Visitor struct {
	helmtemplate.Base[ref]
	reads    []valueRead
	includes []includeCall
}

// scanTemplate returns the "_" value reads and the includes of t, each
// read once per line.
func scanTemplate(f *helmtemplate.File) ([]valueRead, []includeCall) {
	v := &k2Visitor{}
	w := helmtemplate.New[ref](v)
	for _, name := range f.TreeNames() {
		w.Walk(f, name, ref{kind: refRoot})
	}
	return v.reads, v.includes
}

func (v *k2Visitor) record(s *helmtemplate.Scope[ref], n parse.Node, r ref, via string) {
	if r.kind != refObject || (len(r.keys) == 0 && slices.Contains(PlatformKeys, r.object)) {
		return
	}
	rd := valueRead{object: r.object, line: s.File.Line(n.Position()), via: via}
	if len(r.keys) > 0 {
		rd.key = r.keys[0]
	}
	if len(r.keys) > 1 {
		rd.sub = r.keys[1]
	}
	for _, prev := range v.reads {
		if prev.object == rd.object && prev.key == rd.key && prev.sub == rd.sub && prev.line == rd.line {
			return
		}
	}
	v.reads = append(v.reads, rd)
}

// Field records .Values._x... read as a field, a chain or through a
// variable.
func (v *k2Visitor) Field(s *helmtemplate.Scope[ref], n parse.Node, base ref, names []string) ref {
	r := base.field(names...)
	v.record(s, n, r, ".Values")
	return r
}

// Range binds its variables to what it ranges over (a key read through
// them is a key of that object) and leaves its dot unknown.
func (v *k2Visitor) Range(_ *helmtemplate.Scope[ref], over ref) helmtemplate.Range[ref] {
	return helmtemplate.Range[ref]{Key: over, Elem: over, Passes: 1}
}

func (v *k2Visitor) Template(s *helmtemplate.Scope[ref], n *parse.TemplateNode, _ ref) ref {
	var arg parse.Node
	if n.Pipe != nil {
		arg = n.Pipe
	}
	v.includes = append(v.includes, includeCall{name: n.Name, line: s.File.Line(n.Position()), arg: arg})
	return ref{}
}

// Call evaluates index, get, hasKey and dig of literal keys (recording the
// read), default and required (their value), and records includes.
func (v *k2Visitor) Call(s *helmtemplate.Scope[ref], c helmtemplate.Call[ref]) ref {
	if c.Node == nil {
		return ref{}
	}
	// A piped value counts only through default and required piped from
	// the pipeline's first command (X | default Y is X); any other command
	// is its own value.
	if c.Piped && (c.Name == "default" || c.Name == "required") && onlyDefaults(c.Pipe) {
		return c.Args[len(c.Args)-1]
	}
	args := c.Args
	if c.Piped {
		args = args[:len(args)-1]
	}
	r := k2Value(c.Name, c.Operands(), args)
	switch c.Name {
	case "index", "get", "hasKey", "dig":
		v.record(s, c.Node, r, c.Name)
	case "include":
		if len(c.Node.Args) < 2 {
			break
		}
		name, ok := c.Node.Args[1].(*parse.StringNode)
		if !ok {
			break
		}
		var arg parse.Node
		if len(c.Node.Args) > 2 {
			arg = c.Node.Args[2]
		}
		v.includes = append(v.includes, includeCall{name: name.Text, line: s.File.Line(c.Node.Position()), arg: arg})
		if object, ok := cozyLibReaders[name.Text]; ok {
			if key, ok := firstListString(arg); ok {
				v.record(s, c.Node, ref{kind: refObject, object: object, keys: []string{key}}, name.Text)
			}
		}
	}
	return r
}

// onlyDefaults is true when every command of p after the first is default
// or required.
func onlyDefaults(p *parse.PipeNode) bool {
	for _, c := range p.Cmds[1:] {
		if id, ok := c.Args[0].(*parse.IdentifierNode); !ok || (id.Ident != "default" && id.Ident != "required") {
			return false
		}
	}
	return true
}

// firstListString returns KEY of an argument (list "KEY" ...).
func firstListString(n parse.Node) (string, bool) {
	if p, ok := n.(*parse.PipeNode); ok && len(p.Cmds) == 1 {
		args := p.Cmds[0].Args
		if len(args) >= 2 {
			if id, ok := args[0].(*parse.IdentifierNode); ok && id.Ident == "list" {
				if s, ok := args[1].(*parse.StringNode); ok {
					return s.Text, true
				}
			}
		}
	}
	return "", false
}

// k2Value is the value of function name with operand nodes and their
// values args (without a piped value).
func k2Value(name string, nodes []parse.Node, args []ref) ref {
	if name == "" {
		if len(args) == 1 {
			return args[0]
		}
		return ref{}
	}
	strs := func(nodes []parse.Node) ([]string, bool) {
		var out []string
		for _, n := range nodes {
			sn, ok := n.(*parse.StringNode)
			if !ok {
				return nil, false
			}
			out = append(out, sn.Text)
		}
		return out, true
	}
	switch name {
	case "index", "get", "hasKey":
		if len(nodes) < 2 {
			return ref{}
		}
		keys, ok := strs(nodes[1:])
		if !ok {
			return ref{}
		}
		return args[0].field(keys...)
	case "dig":
		// dig "k1" "k2" DEFAULT DICT
		if len(nodes) < 3 {
			return ref{}
		}
		keys, ok := strs(nodes[:len(nodes)-2])
		if !ok {
			return ref{}
		}
		return args[len(args)-1].field(keys...)
	case "required", "default":
		if len(args) == 0 {
			return ref{}
		}
		return args[len(args)-1]
	}
	return ref{}
}
