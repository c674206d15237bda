package backup_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The core adds no finalizer to any object (contract K7: cleanup is the
// driver's): no non-test source of the core's packages (this directory
// but the Job driver, a driver, and the test helpers) calls
// controllerutil.AddFinalizer, SetFinalizers, or writes a Finalizers
// field. TestDriverKilledMidRun checks the same on the objects of a real
// run.
func TestCoreAddsNoFinalizer(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "jobdriver" || d.Name() == "backuptest") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if name := n.Sel.Name; name == "AddFinalizer" || name == "SetFinalizers" {
					t.Errorf("%s: calls %s", path, name)
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Finalizers" {
					t.Errorf("%s: sets Finalizers", path)
				}
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					if s, ok := l.(*ast.SelectorExpr); ok && s.Sel.Name == "Finalizers" {
						t.Errorf("%s: assigns Finalizers", path)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
