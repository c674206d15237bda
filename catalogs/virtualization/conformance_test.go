package virtualization_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cozystack.io/contracts/conformance"
)

// The catalog conforms to the contracts (K1–K6) of every platform release
// that accepts it (contracts/conformance; the same checks as
// `cozypkg conformance catalogs/virtualization --platform-version 0.1.0`).
func TestConformance(t *testing.T) {
	conformance.RunWindow(t, ".")
}

// A copy of the catalog that declares a newer minPlatformVersion than the
// platform fails, with one finding saying so.
func TestConformanceRefusesNewerMinPlatformVersion(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"applicationdefinitions", "charts"} {
		if err := os.CopyFS(filepath.Join(dir, p), os.DirFS(p)); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile("catalog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join(dir, "catalog.yaml")
	if !strings.Contains(string(data), "\nminPlatformVersion: 0.1.0\n") {
		t.Fatal("catalog.yaml has no minPlatformVersion: 0.1.0 line")
	}
	if err := os.WriteFile(catalog, []byte(strings.Replace(string(data), "\nminPlatformVersion: 0.1.0\n", "\nminPlatformVersion: 0.2.0\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := conformance.CheckDir(dir, conformance.Options{PlatformVersion: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	errs := r.Errors()
	if len(errs) != 1 || errs[0].RuleID != "REQ-min-platform-version" || errs[0].File != "catalog.yaml" || errs[0].Line == 0 ||
		!strings.Contains(errs[0].Message, "needs platform 0.2.0 or newer; platform 0.1.0 refuses it") {
		t.Fatalf("errors %v, want one REQ-min-platform-version naming 0.2.0 and 0.1.0", errs)
	}
	t.Logf("%s", errs[0])
}
