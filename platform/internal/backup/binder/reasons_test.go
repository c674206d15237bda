package binder_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

var (
	// conditionReason is metav1.Condition's reason pattern (its
	// validation in k8s.io/apimachinery).
	conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
	// camelCase is UpperCamelCase: words of a capital and lower-case
	// letters or digits, no separators.
	camelCase = regexp.MustCompile(`^(?:[A-Z][a-z0-9]+)+$`)
)

// Every condition reason of the backup API (each constant named Reason* in
// sdk/backup/api/v1alpha1, read from its source) is CamelCase, matches the
// metav1.Condition reason pattern, is named Reason<value>, and is unique;
// every binder reason is one of them.
func TestReasonConstants(t *testing.T) {
	out, err := exec.Command(goTool(), "list", "-f", "{{.Dir}}", "cozystack.io/sdk/backup/api/v1alpha1").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{} // value → constant
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Reason") {
						continue
					}
					pos := fset.Position(name.Pos())
					lit, ok := valueAt(vs, i).(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: %s is not a string literal; this test reads literals only", pos, name.Name)
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					if !camelCase.MatchString(v) {
						t.Errorf("%s: %s = %q is not CamelCase", pos, name.Name, v)
					}
					if !conditionReason.MatchString(v) || len(v) > 1024 {
						t.Errorf("%s: %s = %q does not match the condition reason pattern %s", pos, name.Name, v, conditionReason)
					}
					if name.Name != "Reason"+v {
						t.Errorf("%s: %s = %q: a reason's constant is named Reason<value>", pos, name.Name, v)
					}
					if prev, dup := reasons[v]; dup {
						t.Errorf("%s: %s repeats the value %q of %s", pos, name.Name, v, prev)
					}
					reasons[v] = name.Name
				}
			}
		}
	}
	if len(reasons) < len(backupsv1alpha1.BinderReasons) {
		t.Fatalf("found %d reason constants in %s, fewer than the binder's alone", len(reasons), dir)
	}
	for _, r := range backupsv1alpha1.BinderReasons {
		if _, ok := reasons[r]; !ok {
			t.Errorf("binder reason %q is no Reason* constant", r)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(backupsv1alpha1.BinderReasons)))) != len(backupsv1alpha1.BinderReasons) {
		t.Errorf("BinderReasons repeats a reason: %v", backupsv1alpha1.BinderReasons)
	}
	t.Logf("%d reason constants checked", len(reasons))
}

// valueAt returns the i-th value of vs (nil when implicit).
func valueAt(vs *ast.ValueSpec, i int) ast.Expr {
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}

// goTool is the go command of this toolchain.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(os.Getenv("GOROOT"), "bin", "go")
}
