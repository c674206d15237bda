package goimports

import (
	"errors"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"

	"cozystack.io/tools/internal/boundary/config"
	"cozystack.io/tools/internal/boundary/edge"
)

// goModule is one Go module of the tree.
type goModule struct {
	path string // module path from go.mod
	dir  string // slash path relative to the root
}

// Scan returns the go-import edges (and go-parse findings) under root, with
// From and To set from cfg's modules; they are not judged yet. It fails when
// the go command cannot list the packages at all.
func Scan(root string, cfg *config.Config) ([]edge.Edge, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(absRoot); err == nil {
		absRoot = real
	}
	mods, work, err := findModules(absRoot, cfg)
	if err != nil || len(mods) == 0 {
		return nil, err
	}

	files := map[string]*packages.Package{} // absolute file → a package holding it
	load := func(dir, gowork string, patterns []string) error {
		pkgs, err := packages.Load(&packages.Config{
			Mode:  packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedModule,
			Dir:   dir,
			Tests: true,
			Env:   goEnv(gowork),
		}, patterns...)
		if err != nil {
			return fmt.Errorf("listing Go packages in %s: %w", dir, err)
		}
		for _, p := range pkgs {
			for _, f := range append(append([]string{}, p.GoFiles...), p.IgnoredFiles...) {
				if _, seen := files[f]; !seen && strings.HasSuffix(f, ".go") {
					files[f] = p
				}
			}
		}
		return nil
	}
	if work != "" {
		patterns := make([]string, len(mods))
		for i, m := range mods {
			patterns[i] = "./" + m.dir + "/..."
			if m.dir == "" {
				patterns[i] = "./..."
			}
		}
		err = load(absRoot, work, patterns)
	} else {
		for _, m := range mods {
			if err = load(filepath.Join(absRoot, filepath.FromSlash(m.dir)), "off", []string{"./..."}); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}

	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	var edges []edge.Edge
	fset := token.NewFileSet()
	for _, f := range names {
		rel, err := filepath.Rel(absRoot, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // generated test mains live in the build cache
		}
		rel = filepath.ToSlash(rel)
		if cfg.Skips(rel) {
			continue
		}
		from := cfg.ModuleOf(rel)
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		file, err := parser.ParseFile(fset, rel, src, parser.ImportsOnly)
		if err != nil {
			edges = append(edges, edge.Edge{Rule: edge.GoParse, From: from, File: rel, Line: errorLine(err),
				Target: rel, Reason: "imports unknown: " + err.Error()})
			continue
		}
		pkg := files[f]
		for _, spec := range file.Imports {
			imp := strings.Trim(spec.Path.Value, "\"`")
			if p, ok := pkg.Imports[imp]; ok {
				// The path go list resolved it to (through vendor/, say);
				// without NeedDeps only the ID may be set.
				if id, _, _ := strings.Cut(p.ID, " "); p.PkgPath != "" {
					imp = p.PkgPath
				} else if id != "" {
					imp = id
				}
			}
			m, ok := owner(mods, imp)
			if !ok {
				continue
			}
			to := cfg.ModuleOf(m.dir)
			if to == from {
				continue
			}
			edges = append(edges, edge.Edge{Rule: edge.GoImport, From: from, To: to, File: rel,
				Line: fset.Position(spec.Path.Pos()).Line, Target: imp})
		}
	}
	return edges, nil
}

// findModules returns the Go modules of the tree: the use directives of
// root/go.work when it exists (and its path), else every go.mod below root
// outside excluded directories.
func findModules(absRoot string, cfg *config.Config) ([]goModule, string, error) {
	work := filepath.Join(absRoot, "go.work")
	var dirs []string
	if data, err := os.ReadFile(work); err == nil {
		wf, err := modfile.ParseWork(work, data, nil)
		if err != nil {
			return nil, "", err
		}
		for _, u := range wf.Use {
			dirs = append(dirs, u.Path)
		}
	} else {
		work = ""
		err := filepath.WalkDir(absRoot, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(absRoot, p)
			if d.IsDir() && rel != "." && cfg.Excluded(filepath.ToSlash(rel)) {
				return filepath.SkipDir
			}
			if !d.IsDir() && d.Name() == "go.mod" {
				dirs = append(dirs, filepath.Dir(rel))
			}
			return nil
		})
		if err != nil {
			return nil, "", err
		}
	}
	var mods []goModule
	for _, d := range dirs {
		dir := filepath.Join(absRoot, filepath.FromSlash(d))
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			return nil, "", err
		}
		mp := modfile.ModulePath(data)
		if mp == "" {
			return nil, "", fmt.Errorf("%s/go.mod: no module line", d)
		}
		rel, err := filepath.Rel(absRoot, dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // a workspace module outside the tree is not ours to judge
		}
		rel = path.Clean(filepath.ToSlash(rel))
		if rel == "." {
			rel = ""
		}
		mods = append(mods, goModule{path: mp, dir: rel})
	}
	return mods, work, nil
}

// owner returns the module whose path is the longest prefix of an import path.
func owner(mods []goModule, imp string) (goModule, bool) {
	var best goModule
	found := false
	for _, m := range mods {
		if (imp == m.path || strings.HasPrefix(imp, m.path+"/")) && len(m.path) > len(best.path) {
			best, found = m, true
		}
	}
	return best, found
}

// goEnv is the environment of the go command: GOWORK chosen by the scanner,
// and GOFLAGS without -mod, which workspace mode rejects.
func goEnv(gowork string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		switch {
		case strings.HasPrefix(kv, "GOWORK="):
		case strings.HasPrefix(kv, "GOFLAGS="):
			var keep []string
			for _, f := range strings.Fields(strings.TrimPrefix(kv, "GOFLAGS=")) {
				if !strings.HasPrefix(f, "-mod=") {
					keep = append(keep, f)
				}
			}
			env = append(env, "GOFLAGS="+strings.Join(keep, " "))
		default:
			env = append(env, kv)
		}
	}
	return append(env, "GOWORK="+gowork)
}

// errorLine is the line of the first error go/parser reports, or 1.
func errorLine(err error) int {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return list[0].Pos.Line
	}
	return 1
}
