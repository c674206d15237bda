package conformance_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/conformance"
)

const baseCatalog = "testdata/catalog"

// seededCase is one entry of testdata/cases.yaml: changes that seed one
// violation into a copy of testdata/catalog, and the findings they must
// give (all of them: nothing else may be reported).
type seededCase struct {
	Name            string            `json:"name"`
	PlatformVersion string            `json:"platformVersion"`
	Edits           []edit            `json:"edits"`
	Write           map[string]string `json:"write"`
	Remove          []string          `json:"remove"`
	// Previous, when set, is the catalog's previous version: the base
	// catalog with these changes.
	Previous *struct {
		Edits  []edit            `json:"edits"`
		Write  map[string]string `json:"write"`
		Remove []string          `json:"remove"`
	} `json:"previous"`
	Want []wantFinding `json:"want"`
}

type wantFinding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Path     string `json:"path"`
}

func (w wantFinding) String() string {
	return fmt.Sprintf("%s %s %s:%d %s", w.Severity, w.Rule, w.File, w.Line, w.Path)
}

func loadCases(t *testing.T) []seededCase {
	t.Helper()
	data, err := os.ReadFile("testdata/cases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []seededCase
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// seed copies the base catalog and applies the changes.
func seed(t *testing.T, edits []edit, write map[string]string, remove []string) string {
	t.Helper()
	dir := copyTree(t, baseCatalog)
	applyEdits(t, dir, edits)
	for p, content := range write {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range remove {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func got(r *conformance.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, wantFinding{Rule: f.RuleID, Severity: string(f.Severity), File: f.File, Line: f.Line, Path: f.Path}.String())
	}
	slices.Sort(out)
	return out
}

// The base catalog is the fixed version of every case: it passes with no
// finding at all, also against itself as the previous version.
func TestBaseCatalogPasses(t *testing.T) {
	prev, err := conformance.LoadDir(baseCatalog)
	if err != nil {
		t.Fatal(err)
	}
	r, err := conformance.CheckDir(baseCatalog, conformance.Options{PlatformVersion: "0.1.0", Previous: prev})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) > 0 {
		t.Errorf("findings on the base catalog:\n%s", strings.Join(got(r), "\n"))
	}
	if r.Catalog != "demo" || r.ContractVersion != "v1alpha1" || !strings.HasPrefix(r.ContractDigest, "sha256:") || r.Previous != baseCatalog {
		t.Errorf("report header %+v", r)
	}
}

// Every seeded violation is found with its rule ID, severity, file, line
// and path, and nothing else is.
func TestSeededViolations(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			dir := seed(t, c.Edits, c.Write, c.Remove)
			opts := conformance.Options{PlatformVersion: c.PlatformVersion}
			if opts.PlatformVersion == "" {
				opts.PlatformVersion = "0.1.0"
			}
			if c.Previous != nil {
				prev, err := conformance.LoadDir(seed(t, c.Previous.Edits, c.Previous.Write, c.Previous.Remove))
				if err != nil {
					t.Fatal(err)
				}
				opts.Previous = prev
			}
			r, err := conformance.CheckDir(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range c.Want {
				if w.Severity == "" {
					w.Severity = "error"
				}
				want = append(want, w.String())
			}
			slices.Sort(want)
			if g := got(r); !slices.Equal(g, want) {
				t.Errorf("findings:\n  %s\nwant:\n  %s", strings.Join(g, "\n  "), strings.Join(want, "\n  "))
				for _, f := range r.Findings {
					t.Logf("%s", f)
				}
			}
			for _, f := range r.Findings {
				if f.Message == "" || f.Fix == "" {
					t.Errorf("%s %s has no message or no fix", f.RuleID, f.Location())
				}
				if _, ok := conformance.RuleByID(f.RuleID); !ok {
					t.Errorf("rule %s is not in conformance.Rules", f.RuleID)
				}
			}
			if wantPass := !slices.ContainsFunc(c.Want, func(w wantFinding) bool { return w.Severity == "" || w.Severity == "error" }); r.Passed() != wantPass {
				t.Errorf("Passed() = %v, want %v", r.Passed(), wantPass)
			}
		})
	}
}

// Every static rule has a seeded case (the live rules are seeded in
// platform/internal/conformancetest).
func TestEveryStaticRuleIsSeeded(t *testing.T) {
	seeded := map[string]bool{}
	for _, c := range loadCases(t) {
		for _, w := range c.Want {
			seeded[w.Rule] = true
		}
	}
	for _, r := range conformance.Rules {
		if r.Contract != "LIVE" && !seeded[r.ID] {
			t.Errorf("rule %s has no case in testdata/cases.yaml", r.ID)
		}
	}
}
