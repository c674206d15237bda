package sdkcompat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Removal is the exported function RemoveExportedFunc deleted.
type Removal struct {
	// Package is its import path; File its file, relative to the module
	// directory, slash-separated; Func its name.
	Package string `json:"package"`
	File    string `json:"file"`
	Func    string `json:"func"`
	// Change is the line apidiff's module-mode report must hold for it,
	// e.g. "./backup/apply.Status: removed".
	Change string `json:"change"`
}

// ErrNoCandidate: the module has no exported function whose removal
// leaves every package compiling.
var ErrNoCandidate = errors.New("no exported top-level function that nothing else in the module names")

// RemoveExportedFunc deletes, in place, the first exported top-level
// function (no method) of the module in moduleDir whose name no other
// identifier of the module's non-test files uses, and that is not the only
// user of an import of its file, so every package still compiles without
// it. Walk order: directories in lexical order, then
// files in lexical order, then declarations in source order. Skipped:
// test files, files the build constraints exclude for this GOOS/GOARCH,
// generated files, package main, internal packages, testdata and vendor
// directories, nested modules and directories starting with "." or "_".
// The function goes with its doc comment, and the file is gofmt'ed; an
// error is ErrNoCandidate, a file that does not parse, or a write.
func RemoveExportedFunc(moduleDir string) (Removal, error) {
	modPath, err := ModulePath(moduleDir)
	if err != nil {
		return Removal{}, err
	}
	type file struct {
		rel, abs string
		ast      *ast.File
		src      []byte
		pkgPath  string
		eligible bool
	}
	var files []file
	uses := map[string]int{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(moduleDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != moduleDir {
			n := d.Name()
			if n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		pkg, err := build.Default.ImportDir(p, 0)
		if err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(moduleDir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		pkgPath := modPath
		if rel != "." {
			pkgPath = path.Join(modPath, rel)
		}
		eligible := pkg.Name != "main" && !isInternal(rel)
		names := append(slices.Clone(pkg.GoFiles), pkg.CgoFiles...)
		slices.Sort(names)
		for _, name := range names {
			abs := filepath.Join(p, name)
			src, err := os.ReadFile(abs)
			if err != nil {
				return err
			}
			f, err := parser.ParseFile(fset, abs, src, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					uses[id.Name]++
				}
				return true
			})
			files = append(files, file{rel: path.Join(rel, name), abs: abs, ast: f, src: src, pkgPath: pkgPath, eligible: eligible && !ast.IsGenerated(f)})
		}
		return nil
	})
	if err != nil {
		return Removal{}, err
	}
	for _, f := range files {
		if !f.eligible {
			continue
		}
		for _, decl := range f.ast.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || uses[fn.Name.Name] != 1 || soleImportUser(f.ast, fn) {
				continue
			}
			start := fn.Pos()
			if fn.Doc != nil {
				start = fn.Doc.Pos()
			}
			from, to := fset.Position(start).Offset, fset.Position(fn.End()).Offset
			edited := append(slices.Clone(f.src[:from]), f.src[to:]...)
			formatted, err := format.Source(edited)
			if err != nil {
				return Removal{}, fmt.Errorf("%s without %s: %w", f.rel, fn.Name.Name, err)
			}
			if err := os.WriteFile(f.abs, formatted, 0o644); err != nil {
				return Removal{}, err
			}
			return Removal{Package: f.pkgPath, File: f.rel, Func: fn.Name.Name, Change: apidiffName(modPath, f.pkgPath, fn.Name.Name) + ": removed"}, nil
		}
	}
	return Removal{}, fmt.Errorf("%s: %w", moduleDir, ErrNoCandidate)
}

// soleImportUser reports whether fn is the only part of file that
// selects from some name (pkg.X): without fn an import could be unused and
// the file would not compile. Conservative: a local variable counts too.
func soleImportUser(file *ast.File, fn *ast.FuncDecl) bool {
	inside, outside := map[string]bool{}, map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				if n.Pos() >= fn.Pos() && n.End() <= fn.End() {
					inside[x.Name] = true
				} else {
					outside[x.Name] = true
				}
			}
		}
		return true
	})
	for name := range inside {
		if !outside[name] {
			return true
		}
	}
	return false
}

// apidiffName is how apidiff's module mode names an object of pkgPath:
// bare in the module's root package, else "./<relative path>.<name>".
func apidiffName(modPath, pkgPath, name string) string {
	if pkgPath == modPath {
		return name
	}
	return "./" + strings.TrimPrefix(pkgPath, modPath+"/") + "." + name
}

// isInternal reports whether the slash-separated relative package path
// is an internal package (apidiff ignores those).
func isInternal(rel string) bool {
	return slices.Contains(strings.Split(rel, "/"), "internal")
}

// Rename is the CRD field RenameCRDField renamed.
type Rename struct {
	File    string `json:"file"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
	// Path is the field's JSON path before the rename, e.g.
	// ".spec.applicationRef"; NewName its new last segment.
	Path    string `json:"path"`
	NewName string `json:"newName"`
	// Change is the line the CRD diff must report for it.
	Change string `json:"change"`
}

// RenameCRDField renames, in place, one field of the CRDs in dir: in the
// first *.yaml file (lexical order) holding a CustomResourceDefinition of
// group, in its first served version, the first property of spec (else of
// the root) in the file's order; the new name is the old one plus
// "Canary". Only that mapping key changes: the rest of the document is
// written back as yaml.v3 reads it. An error names a file that does not
// parse or says that no such field exists.
func RenameCRDField(dir, group string) (Rename, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return Rename{}, err
	}
	slices.Sort(files)
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return Rename{}, err
		}
		var docs []*yaml.Node
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return Rename{}, fmt.Errorf("%s: %w", name, err)
			}
			docs = append(docs, &doc)
		}
		for _, doc := range docs {
			root := body(doc)
			if scalar(lookup(root, "kind")) != "CustomResourceDefinition" || scalar(lookup(lookup(root, "spec"), "group")) != group {
				continue
			}
			spec := lookup(root, "spec")
			kind := scalar(lookup(lookup(spec, "names"), "kind"))
			versions := lookup(spec, "versions")
			if versions == nil || versions.Kind != yaml.SequenceNode {
				continue
			}
			for _, v := range versions.Content {
				if scalar(lookup(v, "served")) != "true" {
					continue
				}
				schema := lookup(lookup(v, "schema"), "openAPIV3Schema")
				props, prefix := lookup(lookup(lookup(schema, "properties"), "spec"), "properties"), ".spec"
				if props == nil || len(props.Content) == 0 {
					props, prefix = lookup(schema, "properties"), ""
				}
				if props == nil || props.Kind != yaml.MappingNode || len(props.Content) == 0 {
					continue
				}
				key := props.Content[0]
				old := key.Value
				key.Value = old + "Canary"
				var out bytes.Buffer
				enc := yaml.NewEncoder(&out)
				enc.SetIndent(2)
				for _, d := range docs {
					if err := enc.Encode(d); err != nil {
						return Rename{}, err
					}
				}
				if err := enc.Close(); err != nil {
					return Rename{}, err
				}
				if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
					return Rename{}, err
				}
				version := scalar(lookup(v, "name"))
				p := prefix + "." + old
				return Rename{
					File: filepath.Base(name), Kind: kind, Version: version, Path: p, NewName: key.Value,
					Change: CRDChange{Kind: kind, Version: version, Path: p, What: "field removed"}.String(),
				}, nil
			}
		}
	}
	return Rename{}, fmt.Errorf("%s: no served version of a %s CustomResourceDefinition has a field to rename", dir, group)
}

// body is the mapping of a document node.
func body(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return n.Content[0]
	}
	return n
}

// lookup is the value of key in mapping n, or nil.
func lookup(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// CopyTree copies the regular files and directories of src into dst
// (created), skipping directories whose name starts with "." (src itself
// aside); symbolic links are copied as links.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if p != src && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return nil
	})
}

// CanaryStep is one run of Check on a scratch copy of the module.
type CanaryStep struct {
	// Edit says what was changed in the copy ("none" for the first step).
	Edit string `json:"edit"`
	// Want is what the check must do: "pass", or "fail naming <change>".
	Want string `json:"want"`
	// Got is what it did: "pass", "fail: N incompatible", or "error: ...".
	Got string `json:"got"`
	OK  bool   `json:"ok"`
	// Result is the check's result (nil on an error).
	Result *Result `json:"result,omitempty"`
}

// CanaryResult is what RunCanary found; OK when every step did as wanted.
type CanaryResult struct {
	Steps []CanaryStep `json:"steps"`
}

// OK: every step did what it must.
func (c *CanaryResult) OK() bool {
	for _, s := range c.Steps {
		if !s.OK {
			return false
		}
	}
	return len(c.Steps) > 0
}

// RunCanary proves that Check works, on a scratch copy of opts.SDKDir in
// a temporary directory (removed afterwards), in three steps: the copy as
// it is must pass; with one exported function removed (RemoveExportedFunc)
// the check must fail, naming that removal as an unaccepted incompatible
// change; with the copy restored and one CRD field renamed (RenameCRDField)
// it must fail naming that field as removed. A step whose check errors
// (say, the copy does not compile) is a failed step. The error is a setup
// error: the copy, or no function or field to edit.
func RunCanary(ctx context.Context, opts Options) (*CanaryResult, error) {
	tmp, err := os.MkdirTemp("", "sdkcompat-canary-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	scratch := filepath.Join(tmp, filepath.Base(opts.SDKDir))
	if err := CopyTree(opts.SDKDir, scratch); err != nil {
		return nil, fmt.Errorf("copying %s: %w", opts.SDKDir, err)
	}
	copyOpts := opts
	copyOpts.SDKDir = scratch
	res := &CanaryResult{}
	run := func(edit, want, change string) {
		step := CanaryStep{Edit: edit, Want: want}
		r, err := Check(ctx, copyOpts)
		switch {
		case err != nil:
			step.Got = "error: " + err.Error()
		case r.OK():
			step.Got = "pass"
			step.OK = change == ""
		default:
			step.Got = fmt.Sprintf("fail: %d incompatible, %d problem(s)", len(r.Incompatible()), len(r.Problems))
			step.OK = change != "" && slices.ContainsFunc(r.Incompatible(), func(f Finding) bool { return f.Change == change })
			if change != "" && !step.OK {
				step.Got += ", none of them " + change
			}
		}
		step.Result = r
		res.Steps = append(res.Steps, step)
	}

	run("none", "pass", "")

	err = editAndRestore(scratch, func() (string, error) {
		rm, err := RemoveExportedFunc(scratch)
		if err == nil {
			run("removed the exported function "+strings.TrimSuffix(rm.Change, ": removed")+" ("+rm.File+")", "fail naming `"+rm.Change+"`", rm.Change)
		}
		return rm.Change, err
	})
	if err != nil {
		return nil, err
	}
	crds := filepath.Join(scratch, filepath.FromSlash(CRDDir))
	err = editAndRestore(crds, func() (string, error) {
		rn, err := RenameCRDField(crds, Group)
		if err == nil {
			run("renamed the CRD field "+rn.Kind+" "+rn.Version+" "+rn.Path+" to "+rn.NewName+" ("+rn.File+")", "fail naming `"+rn.Change+"`", rn.Change)
		}
		return rn.Change, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// editAndRestore saves the .go and .yaml files under dir, runs edit (which
// edits and checks), then writes back every file it changed.
func editAndRestore(dir string, edit func() (string, error)) error {
	saved := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".yaml")) {
			return err
		}
		data, err := os.ReadFile(p)
		saved[p] = data
		return err
	})
	if err != nil {
		return err
	}
	if _, err := edit(); err != nil {
		return err
	}
	for p, data := range saved {
		if cur, err := os.ReadFile(p); err != nil || !bytes.Equal(cur, data) {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
