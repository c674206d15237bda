package conformance

import (
	"slices"
	"strings"
	"text/template/parse"
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
			if !strings.HasPrefix(n, "_") {
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

// scanner collects the reads and includes of one template file.
type scanner struct {
	t        *parsedTemplate
	aliases  map[string]ref
	reads    []valueRead
	includes []includeCall
}

// scanTemplate returns the "_" value reads and the includes of t, each
// once per line.
func scanTemplate(t *parsedTemplate) ([]valueRead, []includeCall) {
	s := &scanner{t: t, aliases: map[string]ref{}}
	names := make([]string, 0, len(t.trees))
	for n := range t.trees {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if tree := t.trees[n]; tree.Root != nil {
			s.walk(tree.Root, ref{kind: refRoot})
		}
	}
	return s.reads, s.includes
}

func (s *scanner) line(n parse.Node) int { return lineAt(s.t.text, n.Position()) }

func (s *scanner) record(n parse.Node, r ref, via string) {
	if r.kind != refObject || (len(r.keys) == 0 && slices.Contains(PlatformKeys, r.object)) {
		return
	}
	rd := valueRead{object: r.object, line: s.line(n), via: via}
	if len(r.keys) > 0 {
		rd.key = r.keys[0]
	}
	if len(r.keys) > 1 {
		rd.sub = r.keys[1]
	}
	for _, prev := range s.reads {
		if prev.object == rd.object && prev.key == rd.key && prev.sub == rd.sub && prev.line == rd.line {
			return
		}
	}
	s.reads = append(s.reads, rd)
}

// walk visits n with dot the value of ".".
func (s *scanner) walk(n parse.Node, dot ref) {
	switch n := n.(type) {
	case nil:
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			s.walk(c, dot)
		}
	case *parse.ActionNode:
		s.pipe(n.Pipe, dot)
	case *parse.IfNode:
		s.pipe(n.Pipe, dot)
		s.walk(n.List, dot)
		s.walk(n.ElseList, dot)
	case *parse.WithNode:
		inner := s.pipe(n.Pipe, dot)
		s.walk(n.List, inner)
		s.walk(n.ElseList, dot)
	case *parse.RangeNode:
		s.pipe(n.Pipe, dot)
		s.walk(n.List, ref{})
		s.walk(n.ElseList, dot)
	case *parse.TemplateNode:
		var arg parse.Node
		if n.Pipe != nil {
			s.pipe(n.Pipe, dot)
			arg = n.Pipe
		}
		s.includes = append(s.includes, includeCall{name: n.Name, line: s.line(n), arg: arg})
	case *parse.PipeNode:
		s.pipe(n, dot)
	case *parse.CommandNode:
		s.command(n, dot)
	case *parse.FieldNode:
		s.record(n, dot.field(n.Ident...), ".Values")
	case *parse.VariableNode:
		s.record(n, s.variable(n), ".Values")
	case *parse.ChainNode:
		s.walk(n.Node, dot)
		s.record(n, s.eval(n.Node, dot).field(n.Field...), ".Values")
	case *parse.BreakNode, *parse.ContinueNode, *parse.TextNode, *parse.CommentNode:
	}
}

// pipe walks a pipeline, binds its declared variables, and returns its
// value.
func (s *scanner) pipe(p *parse.PipeNode, dot ref) ref {
	if p == nil {
		return ref{}
	}
	for _, c := range p.Cmds {
		s.command(c, dot)
	}
	v := s.evalPipe(p, dot)
	for _, d := range p.Decl {
		if len(d.Ident) == 1 {
			s.aliases[d.Ident[0]] = v
		}
	}
	return v
}

func (s *scanner) command(c *parse.CommandNode, dot ref) {
	for _, a := range c.Args {
		s.walk(a, dot)
	}
	if len(c.Args) == 0 {
		return
	}
	id, ok := c.Args[0].(*parse.IdentifierNode)
	if !ok {
		return
	}
	switch id.Ident {
	case "index", "get", "hasKey", "dig":
		s.record(c, s.evalCommand(c, dot), id.Ident)
	case "include":
		if len(c.Args) < 2 {
			return
		}
		name, ok := c.Args[1].(*parse.StringNode)
		if !ok {
			return
		}
		var arg parse.Node
		if len(c.Args) > 2 {
			arg = c.Args[2]
		}
		s.includes = append(s.includes, includeCall{name: name.Text, line: s.line(c), arg: arg})
		if object, ok := cozyLibReaders[name.Text]; ok {
			if key, ok := firstListString(arg); ok {
				s.record(c, ref{kind: refObject, object: object, keys: []string{key}}, name.Text)
			}
		}
	}
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

func (s *scanner) variable(v *parse.VariableNode) ref {
	if len(v.Ident) == 0 {
		return ref{}
	}
	base := ref{kind: refRoot}
	if v.Ident[0] != "$" {
		base = s.aliases[v.Ident[0]]
	}
	return base.field(v.Ident[1:]...)
}

// eval returns the value of an operand.
func (s *scanner) eval(n parse.Node, dot ref) ref {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot
	case *parse.FieldNode:
		return dot.field(n.Ident...)
	case *parse.VariableNode:
		return s.variable(n)
	case *parse.ChainNode:
		return s.eval(n.Node, dot).field(n.Field...)
	case *parse.PipeNode:
		return s.evalPipe(n, dot)
	}
	return ref{}
}

func (s *scanner) evalPipe(p *parse.PipeNode, dot ref) ref {
	if p == nil || len(p.Cmds) == 0 {
		return ref{}
	}
	// X | default Y and X | required "msg" are X.
	for _, c := range p.Cmds[1:] {
		if id, ok := c.Args[0].(*parse.IdentifierNode); !ok || (id.Ident != "default" && id.Ident != "required") {
			return s.evalCommand(p.Cmds[len(p.Cmds)-1], dot)
		}
	}
	return s.evalCommand(p.Cmds[0], dot)
}

func (s *scanner) evalCommand(c *parse.CommandNode, dot ref) ref {
	if len(c.Args) == 1 {
		return s.eval(c.Args[0], dot)
	}
	id, ok := c.Args[0].(*parse.IdentifierNode)
	if !ok {
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
	switch id.Ident {
	case "index", "get", "hasKey":
		if len(c.Args) < 3 {
			return ref{}
		}
		keys, ok := strs(c.Args[2:])
		if !ok {
			return ref{}
		}
		return s.eval(c.Args[1], dot).field(keys...)
	case "dig":
		// dig "k1" "k2" DEFAULT DICT
		if len(c.Args) < 4 {
			return ref{}
		}
		keys, ok := strs(c.Args[1 : len(c.Args)-2])
		if !ok {
			return ref{}
		}
		return s.eval(c.Args[len(c.Args)-1], dot).field(keys...)
	case "required", "default":
		return s.eval(c.Args[len(c.Args)-1], dot)
	}
	return ref{}
}
