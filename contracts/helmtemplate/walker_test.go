package helmtemplate_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"text/template/parse"

	"cozystack.io/contracts/helmtemplate"
)

// exprs is a Visitor whose values are the expressions themselves, written
// out ("$.Values.a.b", `"lit"`, "f(x)"): what each print receives shows
// what the walk bound the dot and each variable to.
type exprs struct {
	helmtemplate.Base[string]
	w      *helmtemplate.Walker[string]
	prints []string
	calls  []string
}

func (e *exprs) Field(_ *helmtemplate.Scope[string], _ parse.Node, base string, names []string) string {
	return strings.Join(append([]string{base}, names...), ".")
}

func (e *exprs) Literal(_ *helmtemplate.Scope[string], n parse.Node) string { return n.String() }

func (e *exprs) Call(_ *helmtemplate.Scope[string], c helmtemplate.Call[string]) string {
	if c.Name == "include" && len(c.Args) >= 2 {
		name := strings.Trim(c.Args[0], `"`)
		known, walked := e.w.Define(name, c.Args[1])
		e.calls = append(e.calls, fmt.Sprintf("include %s known=%v walked=%v", name, known, walked))
		return "include(" + name + ")"
	}
	return c.Name + "(" + strings.Join(c.Args, ", ") + ")"
}

func (e *exprs) Print(s *helmtemplate.Scope[string], n parse.Node, v string) {
	at := fmt.Sprintf("%s:%d", s.File.Name, s.File.Line(n.Position()))
	if s.Define != "" {
		at += " in " + s.Define
	}
	e.prints = append(e.prints, at+" "+v)
}

func (e *exprs) Range(_ *helmtemplate.Scope[string], over string) helmtemplate.Range[string] {
	return helmtemplate.Range[string]{Key: "key(" + over + ")", Elem: "elem(" + over + ")", Dot: "elem(" + over + ")", Passes: 1}
}

func (e *exprs) Assign(old, v string) string { return old + "|" + v }

func (e *exprs) Template(_ *helmtemplate.Scope[string], n *parse.TemplateNode, arg string) string {
	known, walked := e.w.Define(n.Name, arg)
	e.calls = append(e.calls, fmt.Sprintf("template %s known=%v walked=%v", n.Name, known, walked))
	return "template(" + n.Name + ")"
}

func file(t *testing.T, name, text string) *helmtemplate.File {
	t.Helper()
	tr := parse.New(name)
	tr.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := tr.Parse(text, "", "", trees); err != nil {
		t.Fatal(err)
	}
	return &helmtemplate.File{Name: name, Text: text, Trees: trees}
}

// walk walks body (templates/t.yaml) with the defines of libs and of body,
// with "$" as the root context, and returns what it printed and the
// includes it followed.
func walk(t *testing.T, body string, libs ...string) (prints, calls []string) {
	t.Helper()
	var files []*helmtemplate.File
	for i, l := range libs {
		files = append(files, file(t, fmt.Sprintf("lib%d.tpl", i), l))
	}
	f := file(t, "t.yaml", body)
	e := &exprs{}
	e.w = helmtemplate.New[string](e, append(files, f)...)
	e.w.Walk(f, f.Name, "$")
	return e.prints, e.calls
}

func TestWalkScopesAndDot(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{{
		name: "with rebinds the dot, its else keeps the outer one",
		text: "{{ with .Values.a }}{{ .b }}{{ $.c }}{{ else }}{{ .d }}{{ end }}",
		want: []string{"t.yaml:1 $.Values.a.b", "t.yaml:1 $.c", "t.yaml:1 $.d"},
	}, {
		name: "a variable declared inside with ends with it: the outer one is read after",
		text: "{{ $x := \"a\" }}{{ with .v }}{{ $x := \"b\" }}{{ $x }}{{ end }}\n{{ $x }}",
		want: []string{`t.yaml:1 "b"`, `t.yaml:2 "a"`},
	}, {
		name: "assignment keeps what the visitor makes of both values",
		text: "{{ $x := \"a\" }}{{ if .c }}{{ $x = \"b\" }}{{ end }}{{ $x }}",
		want: []string{`t.yaml:1 "a"|"b"`},
	}, {
		name: "an if's variable is visible in its else",
		text: "{{ if $x := .a }}{{ else }}{{ $x }}{{ end }}",
		want: []string{"t.yaml:1 $.a"},
	}, {
		name: "range binds key, element and dot",
		text: "{{ range $k, $v := .Values.m }}{{ $k }} {{ $v.x }} {{ .y }}{{ end }}",
		want: []string{"t.yaml:1 key($.Values.m)", "t.yaml:1 elem($.Values.m).x", "t.yaml:1 elem($.Values.m).y"},
	}, {
		name: "a pipeline passes the previous value last",
		text: "{{ .Values.a | default \"z\" | quote }}",
		want: []string{`t.yaml:1 quote(default("z", $.Values.a))`},
	}, {
		name: "a declaration prints nothing",
		text: "{{ $x := .a }}",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := walk(t, tc.text)
			if !slices.Equal(got, tc.want) {
				t.Errorf("prints %q, want %q", got, tc.want)
			}
		})
	}
}

// A define is walked with the caller's argument as its . and $, in the
// file that defines it; a later file's define replaces an earlier one of
// the same name.
func TestWalkFollowsDefines(t *testing.T) {
	prints, calls := walk(t,
		"{{ include \"lib.x\" .Values.a }}\n{{ template \"lib.y\" .Values.b }}\n{{ include \"lib.none\" . }}",
		"{{ define \"lib.x\" }}old{{ end }}{{ define \"lib.y\" }}{{ .q }}{{ end }}",
		"{{ define \"lib.x\" }}\n{{ .p }}{{ $.r }}{{ $v := . }}{{ with .s }}{{ $v.t }}{{ end }}{{ end }}",
	)
	want := []string{
		"lib1.tpl:2 in lib.x $.Values.a.p",
		"lib1.tpl:2 in lib.x $.Values.a.r",
		"lib1.tpl:2 in lib.x $.Values.a.t",
		"t.yaml:1 include(lib.x)",
		"lib0.tpl:1 in lib.y $.Values.b.q",
		"t.yaml:2 template(lib.y)",
		"t.yaml:3 include(lib.none)",
	}
	if !slices.Equal(prints, want) {
		t.Errorf("prints %q, want %q", prints, want)
	}
	wantCalls := []string{"include lib.x known=true walked=true", "template lib.y known=true walked=true", "include lib.none known=false walked=false"}
	if !slices.Equal(calls, wantCalls) {
		t.Errorf("calls %q, want %q", calls, wantCalls)
	}
}

// A define that includes itself is walked once per chain, not forever.
func TestWalkStopsRecursion(t *testing.T) {
	_, calls := walk(t, "{{ include \"r\" . }}", "{{ define \"r\" }}{{ include \"r\" .x }}{{ end }}")
	want := []string{"include r known=true walked=false", "include r known=true walked=true"}
	if !slices.Equal(calls, want) {
		t.Errorf("calls %q, want %q", calls, want)
	}
}

// Every tree of a file can be walked on its own: the body and each define,
// each with the dot its caller chooses.
func TestWalkEveryTree(t *testing.T) {
	f := file(t, "t.tpl", "{{ .a }}{{ define \"d\" }}{{ .b }}{{ end }}")
	e := &exprs{}
	e.w = helmtemplate.New[string](e)
	for _, name := range f.TreeNames() {
		e.w.Walk(f, name, "<"+name+">")
	}
	want := []string{"t.tpl:1 in d <d>.b", "t.tpl:1 <t.tpl>.a"}
	if !slices.Equal(e.prints, want) {
		t.Errorf("prints %q, want %q", e.prints, want)
	}
}

// Parse checks the function names only when it is given them.
func TestParseFuncs(t *testing.T) {
	text := "{{ nosuch .a }}\n{{ define \"d\" }}x{{ end }}"
	f, err := helmtemplate.Parse("t.yaml", text, nil)
	if err != nil {
		t.Fatalf("without funcs: %v", err)
	}
	if got := f.TreeNames(); !slices.Equal(got, []string{"d", "t.yaml"}) {
		t.Errorf("trees %q, want [d t.yaml]", got)
	}
	if _, err := helmtemplate.Parse("t.yaml", text, map[string]any{"quote": func() {}}); err == nil || !strings.Contains(err.Error(), `t.yaml:1: function "nosuch" not defined`) {
		t.Errorf("with funcs: error %v, want the undefined function named with its file and line", err)
	}
}
