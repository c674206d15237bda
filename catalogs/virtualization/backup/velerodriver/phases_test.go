package velerodriver

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
)

// moduleConstants returns the values of every constant of type typ
// declared in the velero module's pkg/apis/velero/v1 (the module version
// go.mod requires), read from its source: the full list of phases.
func moduleConstants(t *testing.T, typ string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/vmware-tanzu/velero/pkg/apis/velero/v1").Output()
	if err != nil {
		t.Fatalf("go list the velero API package: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var vals []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok {
						s, _ := strconv.Unquote(lit.Value)
						vals = append(vals, s)
					}
				}
			}
		}
	}
	if len(vals) < 5 {
		t.Fatalf("found %d constants of type %s in %s", len(vals), typ, dir)
	}
	return vals
}

// Every BackupPhase and RestorePhase constant of the velero module maps to
// a state, and to the one expected; none is unmapped, no phase waits
// unbounded (Waiting is bounded by startTimeout, Running by the core's
// stall and run timeouts, fed by the item counts).
func TestPhaseMapping(t *testing.T) {
	wantBackup := map[velerov1.BackupPhase]State{
		"": StateWaiting, "New": StateWaiting, "Queued": StateWaiting, "ReadyToStart": StateWaiting,
		"FailedValidation": StateInvalid, "InProgress": StateRunning,
		"WaitingForPluginOperations": StateRunning, "WaitingForPluginOperationsPartiallyFailed": StateRunning,
		"Finalizing": StateRunning, "FinalizingPartiallyFailed": StateRunning,
		"Completed": StateSucceeded, "PartiallyFailed": StateDegraded, "Failed": StateFailed, "Deleting": StateFailed,
	}
	wantRestore := map[velerov1.RestorePhase]State{
		"": StateWaiting, "New": StateWaiting, "FailedValidation": StateInvalid, "InProgress": StateRunning,
		"WaitingForPluginOperations": StateRunning, "WaitingForPluginOperationsPartiallyFailed": StateRunning,
		"Finalizing": StateRunning, "FinalizingPartiallyFailed": StateRunning,
		"Completed": StateSucceeded, "PartiallyFailed": StateDegraded, "Failed": StateFailed,
	}
	backup := moduleConstants(t, "BackupPhase")
	for _, p := range backup {
		t.Run("backup/"+p, func(t *testing.T) {
			got, known := BackupState(velerov1.BackupPhase(p))
			if !known {
				t.Fatalf("Velero backup phase %q is unmapped", p)
			}
			want, ok := wantBackup[velerov1.BackupPhase(p)]
			if !ok {
				t.Fatalf("phase %q of the velero module is missing from this test's table", p)
			}
			if got != want {
				t.Errorf("phase %q: %s, want %s", p, got, want)
			}
		})
	}
	if len(backup)+1 != len(backupStates) {
		t.Errorf("the driver maps %d backup phases, the module declares %d (+ none yet)", len(backupStates), len(backup))
	}
	restore := moduleConstants(t, "RestorePhase")
	for _, p := range restore {
		t.Run("restore/"+p, func(t *testing.T) {
			got, known := RestoreState(velerov1.RestorePhase(p))
			if !known {
				t.Fatalf("Velero restore phase %q is unmapped", p)
			}
			if want := wantRestore[velerov1.RestorePhase(p)]; got != want {
				t.Errorf("phase %q: %s, want %s", p, got, want)
			}
		})
	}
	if len(restore)+1 != len(restoreStates) {
		t.Errorf("the driver maps %d restore phases, the module declares %d (+ none yet)", len(restoreStates), len(restore))
	}
	if s, known := BackupState("SomethingNew"); known || s != StateWaiting {
		t.Errorf("an unknown phase: %s known=%v, want Waiting (bounded) and unknown", s, known)
	}
}
