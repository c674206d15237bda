package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/conformance"
	"cozystack.io/sdk/testenv"
)

// conformanceCatalog is the conformance suite's test catalog: it passes
// every static rule for platform 0.1.0.
var conformanceCatalog = filepath.Join("..", "..", "..", "contracts", "conformance", "testdata", "catalog")

// copyCatalog copies the conformance test catalog and replaces old with
// new in its file rel.
func copyCatalog(t *testing.T, rel, old, new string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "catalog")
	if err := os.CopyFS(dir, os.DirFS(conformanceCatalog)); err != nil {
		t.Fatal(err)
	}
	if rel != "" {
		p := filepath.Join(dir, rel)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), old) {
			t.Fatalf("%s has no %q", rel, old)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestConformanceDirectoryPasses(t *testing.T) {
	stdout, _ := mustRun(t, "conformance", conformanceCatalog, "--platform-version", "0.1.0")
	for _, want := range []string{"Catalog:  demo 0.2.0", "Platform: 0.1.0 (contracts v1alpha1, sha256:", "PASS: 0 error(s), 0 warning(s)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout has no %q:\n%s", want, stdout)
		}
	}
}

// A catalog declaring a newer minPlatformVersion than the platform fails,
// with a finding that says so, in the table and in JSON.
func TestConformanceNewerMinPlatformVersionFails(t *testing.T) {
	dir := copyCatalog(t, "catalog.yaml", "minPlatformVersion: 0.1.0", "minPlatformVersion: 0.2.0")
	stdout, _, err := run(t, "", "conformance", dir, "--platform-version", "0.1.0")
	if err == nil || !strings.Contains(err.Error(), "does not conform to the contracts of platform 0.1.0: 1 error(s)") {
		t.Fatalf("err = %v, want a failure with 1 error", err)
	}
	for _, want := range []string{"REQ-min-platform-version", "catalog.yaml:9 minPlatformVersion", "needs platform 0.2.0 or newer", "FAIL: 1 error(s)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout has no %q:\n%s", want, stdout)
		}
	}
	stdout, _, _ = run(t, "", "conformance", dir, "--platform-version", "0.1.0", "-o", "json")
	var r conformance.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("-o json printed %q: %v", stdout, err)
	}
	if len(r.Findings) != 1 || r.Findings[0].RuleID != "REQ-min-platform-version" || r.Findings[0].Line != 9 || r.Findings[0].Fix == "" {
		t.Errorf("findings %+v", r.Findings)
	}
}

// --previous reports a key the new version removed.
func TestConformancePrevious(t *testing.T) {
	prev := copyCatalog(t, "charts/demo/values.schema.json", "\"users\": {\n", "\"external\": {\"type\": \"boolean\"},\n    \"users\": {\n")
	stdout, _, err := run(t, "", "conformance", conformanceCatalog, "--platform-version", "0.1.0", "--previous", prev, "-o", "yaml")
	if err == nil {
		t.Fatal("a removed key passed")
	}
	var r conformance.Report
	if err := yaml.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("-o yaml printed %q: %v", stdout, err)
	}
	if len(r.Findings) != 1 || r.Findings[0].RuleID != "K4-key-removed" || r.Findings[0].Path != "#/properties/external" || r.Previous != prev {
		t.Errorf("report %+v", r)
	}
}

// An OCI layout is checked as an artifact, with the ApplicationDefinitions
// it carries (K1 and K6 run on them: a seeded AD problem is found in the
// layer's file); one built without applicationdefinitions/ has none, so
// K1 and K6 are skipped and said so.
func TestConformanceLayout(t *testing.T) {
	layout := filepath.Join(t.TempDir(), "demo")
	mustRun(t, "build", conformanceCatalog, "--oci-layout", layout)
	stdout, _ := mustRun(t, "conformance", layout, "--platform-version", "0.1.0")
	for _, want := range []string{"Catalog:  demo 0.2.0 (" + layout + ":0.2.0)", "PASS"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout has no %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "K1, K6") {
		t.Errorf("K1 and K6 skipped on an artifact with definitions:\n%s", stdout)
	}

	// An AD whose openAPISchema differs from its chart's values schema:
	// the build accepts it (the platform could install it), K1 does not.
	differs := copyCatalog(t, "applicationdefinitions/demo.yaml", `"enum":["nano","micro","small"]`, `"enum":["nano","micro","small","large"]`)
	layout = filepath.Join(t.TempDir(), "differs")
	mustRun(t, "build", differs, "--oci-layout", layout)
	stdout, _, err := run(t, "", "conformance", layout, "--platform-version", "0.1.0")
	if err == nil || !strings.Contains(stdout, "K1-chart-schema") || !strings.Contains(stdout, "applicationdefinitions/demo.yaml:11") {
		t.Errorf("err = %v, want a K1-chart-schema finding in applicationdefinitions/demo.yaml:11:\n%s", err, stdout)
	}

	none := copyCatalog(t, "", "", "")
	if err := os.RemoveAll(filepath.Join(none, "applicationdefinitions")); err != nil {
		t.Fatal(err)
	}
	layout = filepath.Join(t.TempDir(), "none")
	mustRun(t, "build", none, "--oci-layout", layout)
	stdout, _ = mustRun(t, "conformance", layout, "--platform-version", "0.1.0")
	for _, want := range []string{"Skipped:  K1, K6: the artifact carries no ApplicationDefinitions", "PASS"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout has no %q:\n%s", want, stdout)
		}
	}
}

// A registry reference, with a previous version in the registry too.
func TestConformanceRegistry(t *testing.T) {
	testenv.Need(t, env)
	dest := env.RegistryHost() + "/catalogs/conformance"
	mustRun(t, "push", conformanceCatalog, dest+":0.2.0", "--plain-http")
	older := copyCatalog(t, "catalog.yaml", "version: 0.2.0", "version: 0.1.0")
	mustRun(t, "push", older, dest+":0.1.0", "--plain-http")
	stdout, _ := mustRun(t, "conformance", dest+":0.2.0", "--previous", dest+":0.1.0", "--plain-http", "--platform-version", "0.1.0")
	for _, want := range []string{"Catalog:  demo 0.2.0 (" + dest + ":0.2.0)", "Previous: " + dest + ":0.1.0", "PASS: 0 error(s)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout has no %q:\n%s", want, stdout)
		}
	}
}

// --ads checks ApplicationDefinitions on their own: the upstream ones give
// warnings only, so the command succeeds.
func TestConformanceADs(t *testing.T) {
	files := testenv.UpstreamADs(t)
	stdout, _ := mustRun(t, "conformance", "--ads", filepath.Dir(files[0]), "--platform-version", "0.1.0", "-o", "json")
	var r conformance.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) == 0 || !r.Passed() {
		t.Errorf("%d findings, passed %v: want warnings only", len(r.Findings), r.Passed())
	}
}

// --live against a cluster without the platform says what is missing.
func TestConformanceLiveNeedsThePlatform(t *testing.T) {
	testenv.Need(t, env)
	_, _, err := run(t, "", "conformance", conformanceCatalog, "--platform-version", "0.1.0", "--live", "--kubeconfig", env.Kubeconfig)
	if err == nil || !strings.Contains(err.Error(), "serves no ApplicationDefinitions") {
		t.Fatalf("err = %v, want the missing ApplicationDefinition API named", err)
	}
}

func TestConformanceErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no platform version", []string{"conformance", conformanceCatalog}, "--platform-version is required"},
		{"unknown platform version", []string{"conformance", conformanceCatalog, "--platform-version", "9.9.0"}, "no contract version is known for the release line 9.9"},
		{"not a catalog", []string{"conformance", t.TempDir(), "--platform-version", "0.1.0"}, "neither a catalog directory"},
		{"two catalogs", []string{"conformance", conformanceCatalog, conformanceCatalog, "--platform-version", "0.1.0"}, "give one catalog"},
		{"live with --ads", []string{"conformance", "--ads", conformanceCatalog + "/applicationdefinitions", "--live", "--platform-version", "0.1.0"}, "--live and --previous need a catalog"},
		{"bad output", []string{"conformance", conformanceCatalog, "--platform-version", "0.1.0", "-o", "xml"}, `-o "xml"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, "", tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
