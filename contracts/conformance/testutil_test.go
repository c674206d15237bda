package conformance_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// copyTree copies the directory src to a new temporary directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// edit is one seeded change: in file, replace the only occurrence of
// Replace (a regular expression when Regexp) with With.
type edit struct {
	File    string `json:"file"`
	Replace string `json:"replace"`
	With    string `json:"with"`
	Regexp  bool   `json:"regexp"`
}

// applyEdits applies edits under dir; an edit whose text does not occur
// exactly once fails the test (the base catalog drifted).
func applyEdits(t *testing.T, dir string, edits []edit) {
	t.Helper()
	for _, e := range edits {
		p := filepath.Join(dir, filepath.FromSlash(e.File))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out := strings.Replace(string(data), e.Replace, e.With, 1)
		if e.Regexp {
			re := regexp.MustCompile(e.Replace)
			if n := len(re.FindAllStringIndex(string(data), -1)); n != 1 {
				t.Fatalf("%s: %q matches %d times, want once", e.File, e.Replace, n)
			}
			out = re.ReplaceAllLiteralString(string(data), e.With)
		} else if n := strings.Count(string(data), e.Replace); n != 1 {
			t.Fatalf("%s: %q occurs %d times, want once", e.File, e.Replace, n)
		}
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
