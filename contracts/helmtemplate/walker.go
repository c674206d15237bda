package helmtemplate

import (
	"slices"
	"strings"
	"text/template/parse"
)

// File is one parsed template file: its body under its own name in Trees
// and one tree per define or block it holds.
type File struct {
	// Name names the file in findings (e.g. charts/demo/templates/a.yaml);
	// its body is Trees[Name].
	Name  string
	Text  string
	Trees map[string]*parse.Tree
}

// Parse parses a template file with text/template/parse. funcs are the
// names of the functions it may call (Helm's, for a check that a template
// renders); nil admits any name. The error is the parser's, naming the
// file and line.
func Parse(name, text string, funcs map[string]any) (*File, error) {
	t := parse.New(name)
	if funcs == nil {
		t.Mode = parse.SkipFuncCheck
	}
	trees := map[string]*parse.Tree{}
	if _, err := t.Parse(text, "", "", trees, funcs); err != nil {
		return nil, err
	}
	return &File{Name: name, Text: text, Trees: trees}, nil
}

// Line returns the 1-based line of byte offset pos of the file's text.
func (f *File) Line(pos parse.Pos) int {
	if int(pos) > len(f.Text) {
		pos = parse.Pos(len(f.Text))
	}
	return strings.Count(f.Text[:pos], "\n") + 1
}

// TreeNames returns the names of the file's trees, sorted.
func (f *File) TreeNames() []string {
	names := make([]string, 0, len(f.Trees))
	for n := range f.Trees {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Scope is where the walk is: the file, the define being walked ("" in a
// file's body), the dot and $, and the variables in scope.
type Scope[V any] struct {
	File   *File
	Define string
	Dot    V
	Dollar V
	vars   []map[string]V
}

func (s *Scope[V]) push() { s.vars = append(s.vars, map[string]V{}) }
func (s *Scope[V]) pop()  { s.vars = s.vars[:len(s.vars)-1] }

func (s *Scope[V]) declare(name string, v V) { s.vars[len(s.vars)-1][name] = v }

// Lookup returns the value of variable name ("$" included), and false
// for a variable not in scope.
func (s *Scope[V]) Lookup(name string) (V, bool) {
	if name == "$" {
		return s.Dollar, true
	}
	for i := len(s.vars) - 1; i >= 0; i-- {
		if v, ok := s.vars[i][name]; ok {
			return v, true
		}
	}
	var zero V
	return zero, false
}

// Call is one command of a pipeline, or a function named as an operand.
type Call[V any] struct {
	// Node is the command (nil for a function named as an operand, such
	// as now in `list now`), at Index of Pipe (Pipe nil for an operand).
	Node  *parse.CommandNode
	Pipe  *parse.PipeNode
	Index int
	// Name is the function, "" when the command's first word is not one
	// (a method such as .Capabilities.APIVersions.Has, or a value
	// receiving the piped one).
	Name string
	// Args are the operands' values: after the function for a named one,
	// all of them otherwise, then the previous command's value when
	// Piped. Operand i is Node.Args[i+1] for a named function,
	// Node.Args[i] otherwise.
	Args  []V
	Piped bool
}

// Operands returns the command's operand nodes, matching Args without
// the piped value.
func (c Call[V]) Operands() []parse.Node {
	if c.Node == nil {
		return nil
	}
	if c.Name != "" {
		return c.Node.Args[1:]
	}
	return c.Node.Args
}

// Range is how a range body is walked: the values of its key and element
// variables, its dot, and how many times to walk it (so that what one
// iteration assigns, the next reads).
type Range[V any] struct {
	Key, Elem, Dot V
	Passes         int
}

// Visitor gives the values of an analysis and records what it looks for.
// Embed Base for the methods an analysis does not need.
type Visitor[V any] interface {
	// Field is base.names: a field, a chain on a value, or a variable
	// (names empty for a bare $x). n is the FieldNode, ChainNode or
	// VariableNode.
	Field(s *Scope[V], n parse.Node, base V, names []string) V
	// Literal is a string, number, bool or nil constant.
	Literal(s *Scope[V], n parse.Node) V
	// Call is a function or method call with its operands evaluated.
	Call(s *Scope[V], c Call[V]) V
	// Print is an action that writes v (one declaring no variable) or
	// the output of a template action.
	Print(s *Scope[V], n parse.Node, v V)
	// Template is {{template "name" arg}}; it returns what it writes.
	Template(s *Scope[V], n *parse.TemplateNode, arg V) V
	// Text is literal text of the template.
	Text(s *Scope[V], n *parse.TextNode)
	// With returns the dot of a with body whose pipeline is v.
	With(s *Scope[V], v V) V
	// Range returns how to walk a range body over v.
	Range(s *Scope[V], over V) Range[V]
	// Assign is the value of a variable holding old after $x = v.
	Assign(old, v V) V
}

// Base is a Visitor that evaluates everything to the zero value and
// records nothing; an analysis embeds it and overrides what it needs.
type Base[V any] struct{}

func (Base[V]) Field(*Scope[V], parse.Node, V, []string) V { var z V; return z }
func (Base[V]) Literal(*Scope[V], parse.Node) V            { var z V; return z }
func (Base[V]) Call(*Scope[V], Call[V]) V                  { var z V; return z }
func (Base[V]) Print(*Scope[V], parse.Node, V)             {}
func (Base[V]) Template(*Scope[V], *parse.TemplateNode, V) V {
	var z V
	return z
}
func (Base[V]) Text(*Scope[V], *parse.TextNode) {}
func (Base[V]) With(_ *Scope[V], v V) V         { return v }
func (Base[V]) Range(*Scope[V], V) Range[V]     { return Range[V]{Passes: 1} }
func (Base[V]) Assign(_, v V) V                 { return v }

// maxDepth is how deep defines are followed.
const maxDepth = 16

type define struct {
	file *File
	tree *parse.Tree
}

// Walker walks templates for one Visitor, following defines among the
// files it was given.
type Walker[V any] struct {
	v       Visitor[V]
	defines map[string]define
	stack   []string
}

// New returns a Walker for v whose defines are those of files; a define
// of a later file replaces one of the same name in an earlier file, as
// Helm parses a parent chart's templates after its subcharts'.
func New[V any](v Visitor[V], files ...*File) *Walker[V] {
	w := &Walker[V]{v: v, defines: map[string]define{}}
	for _, f := range files {
		for name, tree := range f.Trees {
			if name != f.Name {
				w.defines[name] = define{file: f, tree: tree}
			}
		}
	}
	return w
}

// Walk walks tree (f's body, or one of its defines) with dot as its .
// and $.
func (w *Walker[V]) Walk(f *File, tree string, dot V) {
	t := f.Trees[tree]
	if t == nil || t.Root == nil {
		return
	}
	define := ""
	if tree != f.Name {
		define = tree
	}
	s := &Scope[V]{File: f, Define: define, Dot: dot, Dollar: dot, vars: []map[string]V{{}}}
	w.list(s, t.Root)
}

// Define walks the define name with arg as its . and $. known is false
// when no file defines it; walked is false when it is known but already
// being walked (recursion) or the defines are 16 deep.
func (w *Walker[V]) Define(name string, arg V) (known, walked bool) {
	d, ok := w.defines[name]
	if !ok {
		return false, false
	}
	if slices.Contains(w.stack, name) || len(w.stack) > maxDepth {
		return true, false
	}
	w.stack = append(w.stack, name)
	defer func() { w.stack = w.stack[:len(w.stack)-1] }()
	if d.tree.Root != nil {
		s := &Scope[V]{File: d.file, Define: name, Dot: arg, Dollar: arg, vars: []map[string]V{{}}}
		w.list(s, d.tree.Root)
	}
	return true, true
}

func (w *Walker[V]) list(s *Scope[V], l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		w.node(s, n)
	}
}

// block walks l in a scope of its own with dot.
func (w *Walker[V]) block(s *Scope[V], l *parse.ListNode, dot V) {
	if l == nil {
		return
	}
	saved := s.Dot
	s.Dot = dot
	s.push()
	w.list(s, l)
	s.pop()
	s.Dot = saved
}

func (w *Walker[V]) node(s *Scope[V], n parse.Node) {
	switch n := n.(type) {
	case *parse.ActionNode:
		v := w.pipe(s, n.Pipe)
		if len(n.Pipe.Decl) == 0 {
			w.v.Print(s, n, v)
		}
	case *parse.IfNode:
		// The pipeline's variables are visible in both branches.
		s.push()
		w.pipe(s, n.Pipe)
		w.block(s, n.List, s.Dot)
		w.block(s, n.ElseList, s.Dot)
		s.pop()
	case *parse.WithNode:
		dot := s.Dot
		s.push()
		v := w.pipe(s, n.Pipe)
		w.block(s, n.List, w.v.With(s, v))
		s.pop()
		w.block(s, n.ElseList, dot)
	case *parse.RangeNode:
		dot := s.Dot
		s.push()
		r := w.v.Range(s, w.pipeValue(s, n.Pipe))
		switch len(n.Pipe.Decl) {
		case 1:
			s.declare(n.Pipe.Decl[0].Ident[0], r.Elem)
		case 2:
			s.declare(n.Pipe.Decl[0].Ident[0], r.Key)
			s.declare(n.Pipe.Decl[1].Ident[0], r.Elem)
		}
		for range max(r.Passes, 1) {
			w.block(s, n.List, r.Dot)
		}
		s.pop()
		w.block(s, n.ElseList, dot)
	case *parse.TemplateNode:
		var arg V
		if n.Pipe != nil {
			arg = w.pipe(s, n.Pipe)
		}
		w.v.Print(s, n, w.v.Template(s, n, arg))
	case *parse.TextNode:
		w.v.Text(s, n)
	case *parse.ListNode:
		w.list(s, n)
	}
}

// pipe evaluates a pipeline and binds the variables it declares.
func (w *Walker[V]) pipe(s *Scope[V], p *parse.PipeNode) V {
	v := w.pipeValue(s, p)
	if p == nil {
		return v
	}
	for _, d := range p.Decl {
		if len(d.Ident) != 1 {
			continue
		}
		name := d.Ident[0]
		if p.IsAssign && name != "$" {
			if old, ok := s.Lookup(name); ok {
				s.set(name, w.v.Assign(old, v))
				continue
			}
		}
		s.declare(name, v)
	}
	return v
}

// set replaces the value of the innermost variable name in scope.
func (s *Scope[V]) set(name string, v V) {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if _, ok := s.vars[i][name]; ok {
			s.vars[i][name] = v
			return
		}
	}
}

// pipeValue evaluates a pipeline without binding its variables.
func (w *Walker[V]) pipeValue(s *Scope[V], p *parse.PipeNode) V {
	var prev V
	if p == nil {
		return prev
	}
	for i, c := range p.Cmds {
		prev = w.command(s, p, i, c, prev)
	}
	return prev
}

func (w *Walker[V]) command(s *Scope[V], p *parse.PipeNode, i int, c *parse.CommandNode, prev V) V {
	if len(c.Args) == 0 {
		var zero V
		return zero
	}
	piped := i > 0
	call := Call[V]{Node: c, Pipe: p, Index: i, Piped: piped}
	operands := c.Args
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		call.Name, operands = id.Ident, c.Args[1:]
	} else if len(c.Args) == 1 && !piped {
		return w.eval(s, c.Args[0])
	}
	call.Args = make([]V, 0, len(operands)+1)
	for _, n := range operands {
		call.Args = append(call.Args, w.eval(s, n))
	}
	if piped {
		call.Args = append(call.Args, prev)
	}
	return w.v.Call(s, call)
}

// eval returns the value of an operand.
func (w *Walker[V]) eval(s *Scope[V], n parse.Node) V {
	switch n := n.(type) {
	case *parse.DotNode:
		return s.Dot
	case *parse.FieldNode:
		return w.v.Field(s, n, s.Dot, n.Ident)
	case *parse.VariableNode:
		base, _ := s.Lookup(n.Ident[0])
		return w.v.Field(s, n, base, n.Ident[1:])
	case *parse.ChainNode:
		return w.v.Field(s, n, w.eval(s, n.Node), n.Field)
	case *parse.PipeNode:
		return w.pipe(s, n)
	case *parse.IdentifierNode:
		return w.v.Call(s, Call[V]{Name: n.Ident})
	case *parse.StringNode, *parse.NumberNode, *parse.BoolNode, *parse.NilNode:
		return w.v.Literal(s, n)
	}
	var zero V
	return zero
}
