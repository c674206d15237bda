package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cozystack.io/contracts/doctest"
)

// layoutDoc is where the map of the code is written.
const layoutDoc = "docs/contributor/layout.md"

// layoutDir is a directory layoutDoc's "Layout" names, and the Go files
// its description (and the description's continuation lines) names.
type layoutDir struct {
	path  string
	line  int
	files []string
}

var goFileName = regexp.MustCompile(`\b[a-z_]+\.go\b`)

// readmeLayout parses the fenced block of layoutDoc's "Layout": a line
// starts with one or more directory names ending in "/" (siblings), the
// first relative to the closest less indented directory line above it,
// then a description; a line that starts with no such name continues the
// description above.
func readmeLayout(t *testing.T) []layoutDir {
	t.Helper()
	section, first := doctest.SectionAt(t, layoutDoc, "Layout")
	lines := strings.Split(section, "\n")
	start := slices.Index(lines, "```")
	if start < 0 {
		t.Fatalf(`%s's "Layout" has no fenced block`, layoutDoc)
	}
	type level struct {
		indent int
		path   string
	}
	var stack []level
	var dirs []layoutDir
	for i := start + 1; i < len(lines) && lines[i] != "```"; i++ {
		l := lines[i]
		indent := len(l) - len(strings.TrimLeft(l, " "))
		fields := strings.Fields(l)
		var names []string
		for _, f := range fields {
			if !strings.HasSuffix(f, "/") {
				break
			}
			names = append(names, strings.TrimSuffix(f, "/"))
		}
		if len(names) == 0 {
			if len(dirs) > 0 && len(stack) > 0 && indent > stack[len(stack)-1].indent {
				d := &dirs[len(dirs)-1]
				d.files = append(d.files, goFileName.FindAllString(l, -1)...)
			}
			continue
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		parent := ""
		if len(stack) > 0 {
			parent = stack[len(stack)-1].path
		}
		firstPath := path.Join(parent, names[0])
		description := strings.Join(fields[len(names):], " ")
		dirs = append(dirs, layoutDir{path: firstPath, line: first + i})
		for _, sibling := range names[1:] {
			dirs = append(dirs, layoutDir{path: path.Join(path.Dir(firstPath), sibling), line: first + i})
		}
		if len(names) == 1 {
			dirs[len(dirs)-1].files = goFileName.FindAllString(description, -1)
		}
		stack = append(stack, level{indent, firstPath})
	}
	return dirs
}

// goWorkModules returns the module directories go.work uses.
func goWorkModules(t *testing.T, root string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	_, use, ok := strings.Cut(string(data), "use (")
	if !ok {
		t.Fatal("go.work has no use block")
	}
	use, _, _ = strings.Cut(use, ")")
	var modules []string
	for _, f := range strings.Fields(use) {
		modules = append(modules, path.Clean(f))
	}
	return modules
}

// TestREADMELayout checks layoutDoc's "Layout" against the tree: every
// directory it names exists, every Go file it names is in its directory,
// and every Go package of every module of go.work is named, so the map
// shows each package one hop from its folder's name.
func TestREADMELayout(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	dirs := readmeLayout(t)
	named := map[string]bool{}
	for _, d := range dirs {
		named[d.path] = true
		if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(d.path))); err != nil || !st.IsDir() {
			t.Errorf("%s:%d: Layout names %s/, which is no directory", layoutDoc, d.line, d.path)
			continue
		}
		for _, f := range d.files {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(d.path), f)); err != nil {
				t.Errorf("%s:%d: Layout names %s in %s/, which has no such file", layoutDoc, d.line, f, d.path)
			}
		}
	}
	if len(dirs) == 0 {
		t.Fatalf("%s's Layout names no directory", layoutDoc)
	}

	for _, module := range goWorkModules(t, root) {
		err := filepath.WalkDir(filepath.Join(root, module), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(d.Name(), ".go") {
				return nil
			}
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !named[rel] {
				named[rel] = true // one error per package
				t.Errorf("%s's Layout does not name the Go package %s/", layoutDoc, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestEveryPackageHasDocGo: every Go package of every module of go.work
// keeps its package comment ("// Package x ..." or "// Command x ...") in
// its doc.go and nowhere else, so a reader finds what a package does, and
// where its rules are written, in one known file.
func TestEveryPackageHasDocGo(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	for _, module := range goWorkModules(t, root) {
		err := filepath.WalkDir(filepath.Join(root, module), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if n := d.Name(); n == "testdata" || n == "vendor" || (strings.HasPrefix(n, ".") && p != filepath.Join(root, module)) {
				return filepath.SkipDir
			}
			files, _ := filepath.Glob(filepath.Join(p, "*.go"))
			if len(files) == 0 {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			var docs []string
			for _, f := range files {
				fset := token.NewFileSet()
				parsed, err := parser.ParseFile(fset, f, nil, parser.PackageClauseOnly|parser.ParseComments)
				if err != nil {
					return err
				}
				if parsed.Doc != nil {
					docs = append(docs, filepath.Base(f))
				}
			}
			if !slices.Equal(docs, []string{"doc.go"}) {
				t.Errorf("%s: the package comment is in %v, want it in doc.go only", filepath.ToSlash(rel), docs)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
