package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"cozystack.io/sdk/testenv"
)

// Every command that prints a result takes -o table (the default), json
// and yaml, and no other value: a bad one is a usage error naming the
// accepted values.
func TestOutputFormats(t *testing.T) {
	lib := newLibFixture(t)
	layout := filepath.Join(t.TempDir(), "demo")
	dest := t.TempDir()
	app := lib.dependent(t)
	for _, tc := range []struct {
		name     string
		registry bool
		args     []string
		key      string // a key of the json and yaml output
	}{
		{"build", false, []string{"build", testCatalog, "--oci-layout", layout}, "reference"},
		{"push", true, []string{"push", testCatalog, "<registry>/catalogs/formats", "--plain-http"}, "charts"},
		{"package", false, []string{"package", lib.dir, "-d", dest}, "path"},
		{"vendor-lib", false, []string{"vendor-lib", lib.archive, app}, "charts"},
		{"push-lib", true, []string{"push-lib", lib.archive, "<registry>/charts/tlib", "--plain-http"}, "manifestDigest"},
		{"conformance", false, []string{"conformance", conformanceCatalog, "--platform-version", "0.1.0"}, "checked"},
		{"conformance --ads", false, []string{"conformance", "--ads", filepath.Join(conformanceCatalog, "applicationdefinitions"), "--platform-version", "0.1.0"}, "checked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.registry {
				testenv.Need(t, env)
				args = strings.Fields(strings.ReplaceAll(strings.Join(args, " "), "<registry>", env.RegistryHost()))
			}
			def, _, code := runExit(t, "", args...)
			if code != 0 || def == "" {
				t.Fatalf("cozypkg %s: exit %d, stdout %q", strings.Join(args, " "), code, def)
			}
			if table, _, _ := runExit(t, "", append(args, "-o", "table")...); table != def {
				t.Errorf("-o table printed\n%s\nthe default\n%s", table, def)
			}
			for _, format := range []string{"json", "yaml"} {
				out, _, code := runExit(t, "", append(args, "-o", format)...)
				var v map[string]any
				if err := yaml.Unmarshal([]byte(out), &v); err != nil || code != 0 || v[tc.key] == nil {
					t.Errorf("-o %s: exit %d, %v, no %q in\n%s", format, code, err, tc.key, out)
				}
				if format == "json" && !json.Valid([]byte(out)) {
					t.Errorf("-o json printed invalid JSON:\n%s", out)
				}
			}
			_, stderr, code := runExit(t, "", append(args, "-o", "text")...)
			if want := `invalid argument "text" for "-o, --output" flag: the accepted values are table, json and yaml`; code != exitUsage || !strings.Contains(stderr, want) {
				t.Errorf("-o text: exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, want)
			}
		})
	}
}
