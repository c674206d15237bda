package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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
	for _, want := range []string{"Catalog:  demo 0.2.0", "Platform: 0.1.0 (contracts v1alpha1, sha256:", "Checked:  2 charts, 1 ApplicationDefinition in " + conformanceCatalog + "\n", "PASS: 0 error(s), 0 warning(s)"} {
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
// warnings only, so the command succeeds, and says how many it checked.
func TestConformanceADs(t *testing.T) {
	files := testenv.UpstreamADs(t)
	dir := filepath.Dir(files[0])
	stdout, _ := mustRun(t, "conformance", "--ads", dir, "--platform-version", "0.1.0", "-o", "json")
	var r conformanceReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) == 0 || !r.Passed() {
		t.Errorf("%d findings, passed %v: want warnings only", len(r.Findings), r.Passed())
	}
	if len(r.Checked) != 1 || r.Checked[0].Input != dir || r.Checked[0].ApplicationDefinitions != 25 || r.Checked[0].Charts != nil {
		t.Errorf("checked %+v, want 25 ApplicationDefinitions in %s", r.Checked, dir)
	}
}

// With several inputs, each is named with what it held, in the table and
// in JSON; findings name the files as given.
func TestConformanceADsInputs(t *testing.T) {
	files := testenv.UpstreamADs(t)
	info := filepath.Join(filepath.Dir(files[0]), "info.yaml")
	demo := filepath.Join(conformanceCatalog, "applicationdefinitions")
	stdout, _ := mustRun(t, "conformance", "--ads", info, demo, "--platform-version", "0.1.0")
	for _, want := range []string{
		"Catalog:  " + info + ", " + demo + "\n",
		"Checked:  1 ApplicationDefinition in " + info + "\n          1 ApplicationDefinition in " + demo + "\nSkipped:  catalog, K2, K4, K5 and LIVE-* rules: --ads checks ApplicationDefinitions alone (K1, K6)\n",
		info + ":13 spec.release.prefix",
		"the HelmRelease of an Info object",
		"PASS: 0 error(s), 1 warning(s)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout has no %q:\n%s", want, stdout)
		}
	}
	stdout, _ = mustRun(t, "conformance", "--ads", info, demo, "--platform-version", "0.1.0", "-o", "yaml")
	var r conformanceReport
	if err := yaml.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	want := []checked{{Input: info, ApplicationDefinitions: 1}, {Input: demo, ApplicationDefinitions: 1}}
	if !reflect.DeepEqual(r.Checked, want) {
		t.Errorf("checked %+v, want %+v", r.Checked, want)
	}
}

// An --ads input holding no ApplicationDefinition fails, saying why: a run
// that checked nothing does not pass.
func TestConformanceADsNothingToCheck(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"other/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\n---\napiVersion: v1\nkind: Service\n",
		"empty/empty.yaml":  "# nothing\n",
	})
	demo := filepath.Join(conformanceCatalog, "applicationdefinitions")
	for _, tc := range []struct {
		name   string
		inputs []string
		want   string
	}{
		{"no YAML file", []string{filepath.Join(conformanceCatalog, "charts")}, "0 ApplicationDefinitions found in " + filepath.Join(conformanceCatalog, "charts") + ": no .yaml or .yml file in it (subdirectories are not read)"},
		{"other API groups", []string{filepath.Join(dir, "other")}, "0 ApplicationDefinitions found in " + filepath.Join(dir, "other") + ": 1 file with 2 YAML documents, none of API group cozystack.io"},
		{"an empty file", []string{filepath.Join(dir, "empty", "empty.yaml")}, "0 ApplicationDefinitions found in " + filepath.Join(dir, "empty", "empty.yaml") + ": 1 file without a YAML document"},
		{"the second of two", []string{demo, filepath.Join(dir, "other", "deploy.yaml")}, "0 ApplicationDefinitions found in " + filepath.Join(dir, "other", "deploy.yaml") + ":"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runExit(t, "", append([]string{"conformance", "--ads", "--platform-version", "0.1.0"}, tc.inputs...)...)
			if code != exitFailed || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, tc.want)
			}
		})
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
