package cnpgdriver

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
)

// moduleConstants parses the CNPG API package of the module in the build
// list and returns its constants whose names start with prefix, by name.
func moduleConstants(t *testing.T, prefix string) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/cloudnative-pg/cloudnative-pg/api/v1").Output()
	if err != nil {
		t.Fatalf("go list the CNPG API package: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, nil, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", dir, err)
	}
	consts := map[string]string{}
	for _, pkg := range pkgs {
		for file, f := range pkg.Files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							t.Fatalf("%s: constant %s is not a string literal", filepath.Base(file), n.Name)
						}
						v, _ := strconv.Unquote(lit.Value)
						consts[n.Name] = v
					}
				}
			}
		}
	}
	return consts
}

// Every Backup phase the CNPG API module declares is mapped: the module's
// source is the list, so a phase added by a CNPG upgrade fails this test
// until it is classified.
func TestEveryCNPGPhaseIsMapped(t *testing.T) {
	consts := moduleConstants(t, "BackupPhase")
	if len(consts) < 7 {
		t.Fatalf("found %d BackupPhase constants in the CNPG module (%v); want at least the 7 of v1.27", len(consts), consts)
	}
	for name, value := range consts {
		if _, ok := Phases[cnpgv1.BackupPhase(value)]; !ok {
			t.Errorf("CNPG phase %s (%q) is not mapped in Phases", name, value)
		}
	}
	// And the table names nothing the module does not declare (but "").
	declared := map[string]bool{"": true}
	for _, v := range consts {
		declared[v] = true
	}
	for phase := range Phases {
		if !declared[string(phase)] {
			t.Errorf("Phases maps %q, which the CNPG module does not declare", phase)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		phase   cnpgv1.BackupPhase
		class   Class
		percent int32
	}{
		{"", Waiting, 0},
		{cnpgv1.BackupPhasePending, Waiting, 0},
		{cnpgv1.BackupPhaseWalArchivingFailing, Waiting, 0},
		{cnpgv1.BackupPhaseStarted, Running, 10},
		{cnpgv1.BackupPhaseRunning, Running, 50},
		{cnpgv1.BackupPhaseFinalizing, Running, 90},
		{cnpgv1.BackupPhaseCompleted, Completed, 100},
		{cnpgv1.BackupPhaseFailed, Failed, 0},
		{"someFuturePhase", Waiting, 0},
	} {
		c, p := Classify(tc.phase)
		if c != tc.class || p != tc.percent {
			t.Errorf("Classify(%q) = %s %d, want %s %d", tc.phase, c, p, tc.class, tc.percent)
		}
	}
}
