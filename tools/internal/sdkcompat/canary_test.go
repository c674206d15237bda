package sdkcompat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemoveExportedFunc: each directory of testdata/canary is a module;
// RemoveExportedFunc runs on a copy, and want.golden beside the module is
// the Removal it returns (or its error) and the edited file as it is
// afterwards.
func TestRemoveExportedFunc(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "canary"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			src := filepath.Join("testdata", "canary", e.Name())
			dir := filepath.Join(t.TempDir(), "m")
			if err := CopyTree(src, dir); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dir, "want.golden"))
			var got strings.Builder
			rm, err := RemoveExportedFunc(dir)
			switch {
			case errors.Is(err, ErrNoCandidate):
				got.WriteString("error: " + ErrNoCandidate.Error() + "\n")
			case err != nil:
				t.Fatal(err)
			default:
				data, _ := json.MarshalIndent(rm, "", "  ")
				got.Write(data)
				edited, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rm.File)))
				if err != nil {
					t.Fatal(err)
				}
				got.WriteString("\n--- " + rm.File + "\n" + string(edited))
			}
			golden(t, filepath.Join(src, "want.golden"), got.String())
		})
	}
}

// TestRenameCRDField: the rename in a copy of testdata/crd/baseline is the
// one of want.golden, the file parses, and DiffCRDs reports exactly the
// change the Rename names plus the new name as an optional field.
func TestRenameCRDField(t *testing.T) {
	src := filepath.Join("testdata", "crd", "baseline")
	dir := t.TempDir()
	if err := CopyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	rn, err := RenameCRDField(dir, Group)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.MarshalIndent(rn, "", "  ")
	golden(t, filepath.Join("testdata", "crd-rename.golden"), string(data)+"\n")

	old, err := LoadCRDs(src, Group)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := LoadCRDs(dir, Group)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range DiffCRDs(old, cur) {
		got = append(got, c.String())
	}
	want := []string{rn.Change, "Plan v1alpha1 .spec." + rn.NewName + ": optional field added"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("DiffCRDs after the rename:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if _, err := RenameCRDField(t.TempDir(), Group); err == nil {
		t.Error("RenameCRDField in an empty directory: no error")
	}
}
