package conformance

import (
	"testing"

	"github.com/Masterminds/semver/v3"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/schemas"
)

// Run checks the catalog directory dir against platform version
// platformVersion, the way a catalog's own test does: every error finding
// fails t (with its rule, location, message and fix), every warning is
// logged. It returns the report.
//
//	func TestConformance(t *testing.T) { conformance.Run(t, ".", "0.1.0") }
func Run(t testing.TB, dir, platformVersion string) *Report {
	t.Helper()
	r, err := CheckDir(dir, Options{PlatformVersion: platformVersion})
	if err != nil {
		t.Fatalf("conformance of %s for platform %s: %v", dir, platformVersion, err)
	}
	for _, f := range r.Findings {
		if f.Severity == Error {
			t.Errorf("conformance (platform %s, contracts %s): %s", platformVersion, r.ContractVersion, f)
		} else {
			t.Logf("conformance (platform %s, contracts %s): %s", platformVersion, r.ContractVersion, f)
		}
	}
	return r
}

// RunWindow runs Run, as a subtest each, for every platform release line
// this contracts module knows that accepts the catalog: the line of its
// minPlatformVersion's contract version and the next one (N and N+1 of
// the window), each at its .0 release. With one contract version known,
// that is one run.
func RunWindow(t *testing.T, dir string) {
	t.Helper()
	cat, err := artifact.LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := schemas.Versions.ForPlatform(cat.MinPlatformVersion)
	if err != nil {
		t.Fatalf("minPlatformVersion: %v", err)
	}
	for _, v := range PlatformVersions(schemas.Versions, cv.Name) {
		t.Run("platform-"+v, func(t *testing.T) { Run(t, dir, v) })
	}
}

// PlatformVersions returns one platform version (MAJOR.MINOR.0) of each
// release line in t whose contract version accepts a catalog written
// against contract catalog.
func PlatformVersions(t schemas.Table, catalog string) []string {
	var out []string
	for _, c := range t {
		if t.Accepts(c.Name, catalog) {
			v, err := semver.NewVersion(c.Platform + ".0")
			if err == nil {
				out = append(out, v.String())
			}
		}
	}
	return out
}
