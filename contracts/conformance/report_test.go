package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"oras.land/oras-go/v2/content/memory"

	"cozystack.io/contracts/artifact/build"
	"cozystack.io/contracts/conformance"
	"cozystack.io/contracts/schemas"
)

// The harness passes the base catalog, for every platform that accepts it.
func TestRun(t *testing.T) {
	r := conformance.Run(t, baseCatalog, "0.1.0")
	if !r.Passed() {
		t.Error("Run returned a failing report without failing the test")
	}
	conformance.RunWindow(t, baseCatalog)
}

func TestPlatformVersions(t *testing.T) {
	three := schemas.Table{{Name: "a", Platform: "0.1"}, {Name: "b", Platform: "0.2"}, {Name: "c", Platform: "1.0"}}
	for catalog, want := range map[string][]string{"a": {"0.1.0", "0.2.0"}, "b": {"0.2.0", "1.0.0"}, "c": {"1.0.0"}, "x": nil} {
		if got := conformance.PlatformVersions(three, catalog); !slices.Equal(got, want) {
			t.Errorf("PlatformVersions(%s) = %v, want %v", catalog, got, want)
		}
	}
}

// With more contract versions than exist today (only the platform's own
// contract version is read, so it is v1alpha1 in both tables): a catalog
// whose minPlatformVersion (0.1.0) is one contract version behind the
// platform is inside the window, two behind is outside.
func TestContractWindow(t *testing.T) {
	inside := schemas.Table{{Name: "v0a", Platform: "0.1"}, {Name: "v1alpha1", Platform: "0.2"}}
	r, err := conformance.CheckDir(baseCatalog, conformance.Options{PlatformVersion: "0.2.5", Contracts: inside})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Passed() {
		t.Errorf("N-1 refused: %v", r.Findings)
	}
	outside := schemas.Table{{Name: "v0a", Platform: "0.1"}, {Name: "v0b", Platform: "0.2"}, {Name: "v1alpha1", Platform: "0.3"}}
	r, err = conformance.CheckDir(baseCatalog, conformance.Options{PlatformVersion: "0.3.0", Contracts: outside})
	if err != nil {
		t.Fatal(err)
	}
	errs := r.Errors()
	if len(errs) != 1 || errs[0].RuleID != "REQ-contract-window" || !strings.Contains(errs[0].Message, "minPlatformVersion 0.1.0 is contract v0a, outside the window of platform 0.3.0 (contract v1alpha1 accepts v0b (0.2.x) and v1alpha1 (0.3.x))") {
		t.Errorf("N-2: %v", errs)
	}
	if _, err := conformance.CheckDir(baseCatalog, conformance.Options{PlatformVersion: "7.0.0"}); err == nil {
		t.Error("a platform version of no known contract was checked")
	}
}

// A built artifact carries the catalog's ApplicationDefinitions: they are
// its ADs, as the directory's (same files, lines and bytes), K1 and K6
// run on them, and it passes.
func TestCheckArtifact(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	res, err := build.Build(ctx, baseCatalog, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := conformance.LoadArtifact(ctx, store, res.Tag, "memory:"+res.Tag)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := conformance.LoadDir(baseCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if !src.HasADs || len(src.Charts) != 2 || !reflect.DeepEqual(src.ADs, dir.ADs) {
		t.Fatalf("artifact source: HasADs %v, %d charts, ADs %v; want HasADs, 2 charts and the directory's ADs %v", src.HasADs, len(src.Charts), src.ADs, dir.ADs)
	}
	if len(src.ADs) != 1 || src.ADs[0].File != "applicationdefinitions/demo.yaml" || src.ADs[0].Line != 1 {
		t.Errorf("ADs %v, want applicationdefinitions/demo.yaml:1", src.ADs)
	}
	r, err := conformance.Check(src, conformance.Options{PlatformVersion: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 0 || len(r.Skipped) != 0 || r.Catalog != "demo" {
		t.Errorf("report %+v", r)
	}
}

// An artifact without definitions layers (its catalog has no
// applicationdefinitions/, or an older cozypkg built it) is checked
// without ADs: K1 and K6 are skipped, and said so.
func TestCheckArtifactWithoutDefinitions(t *testing.T) {
	ctx := context.Background()
	dir := copyTree(t, baseCatalog)
	if err := os.RemoveAll(filepath.Join(dir, "applicationdefinitions")); err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	res, err := build.Build(ctx, dir, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := conformance.LoadArtifact(ctx, store, res.Tag, "memory:"+res.Tag)
	if err != nil {
		t.Fatal(err)
	}
	if src.HasADs || len(src.ADs) != 0 || len(src.Charts) != 2 {
		t.Fatalf("artifact source: HasADs %v, %d ADs, %d charts", src.HasADs, len(src.ADs), len(src.Charts))
	}
	r, err := conformance.Check(src, conformance.Options{PlatformVersion: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 0 || len(r.Skipped) != 1 || !strings.HasPrefix(r.Skipped[0], "K1, K6: the artifact carries no ApplicationDefinitions") || r.Catalog != "demo" {
		t.Errorf("report %+v", r)
	}
	if _, err := conformance.Live(ctx, nil, src, conformance.LiveOptions{}); err == nil || !strings.Contains(err.Error(), "need the catalog's ApplicationDefinitions") {
		t.Errorf("Live on an artifact without definitions: %v", err)
	}
}

// The AD checks run on an artifact's definitions as on the directory's:
// every seeded case of testdata/cases.yaml with a finding in
// applicationdefinitions/ whose catalog still builds (the build refuses
// what artifact.CheckDefinitions refuses, such as a misspelt field) gives
// the same findings there from its artifact as from its directory.
func TestCheckArtifactRunsADChecks(t *testing.T) {
	ctx := context.Background()
	adFindings := func(r *conformance.Report) []string {
		var out []string
		for _, f := range r.Findings {
			if strings.HasPrefix(f.File, "applicationdefinitions/") {
				out = append(out, fmt.Sprintf("%s %s %s:%d %s", f.Severity, f.RuleID, f.File, f.Line, f.Path))
			}
		}
		slices.Sort(out)
		return out
	}
	checked := 0
	for _, c := range loadCases(t) {
		if c.Previous != nil || !slices.ContainsFunc(c.Want, func(w wantFinding) bool { return strings.HasPrefix(w.File, "applicationdefinitions/") }) {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			dir := seed(t, c.Edits, c.Write, c.Remove)
			store := memory.New()
			res, err := build.Build(ctx, dir, store, build.Options{})
			if err != nil {
				t.Skipf("the build refuses it: %v", err)
			}
			opts := conformance.Options{PlatformVersion: c.PlatformVersion}
			if opts.PlatformVersion == "" {
				opts.PlatformVersion = "0.1.0"
			}
			fromDir, err := conformance.CheckDir(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			src, err := conformance.LoadArtifact(ctx, store, res.Tag, "memory:"+res.Tag)
			if err != nil {
				t.Fatal(err)
			}
			fromArtifact, err := conformance.Check(src, opts)
			if err != nil {
				t.Fatal(err)
			}
			want, got := adFindings(fromDir), adFindings(fromArtifact)
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("findings from the artifact:\n  %s\nfrom the directory:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			checked++
		})
	}
	if checked < 5 {
		t.Errorf("only %d seeded cases built and were compared", checked)
	}
}

func TestReportOutput(t *testing.T) {
	r := &conformance.Report{Source: "dir", Catalog: "demo", Version: "1.0.0", PlatformVersion: "0.1.0", ContractVersion: "v1alpha1", ContractDigest: "sha256:x"}
	r.Merge([]conformance.Finding{
		{RuleID: "K2-unknown-key", Severity: conformance.Error, File: "b.yaml", Line: 3, Path: "_cluster.x", Message: "m1", Fix: "f1"},
		{RuleID: "K6-keys-order", Severity: conformance.Warning, File: "a.yaml", Message: "m2\n  more", Fix: "f2"},
	})
	var table bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Catalog:  demo 1.0.0 (dir)", "SEVERITY  RULE", "warning   K6-keys-order   a.yaml", "m2 more", "error     K2-unknown-key  b.yaml:3 _cluster.x", "fix: f1", "FAIL: 1 error(s), 1 warning(s)"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table has no %q:\n%s", want, table.String())
		}
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back conformance.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Findings) != 2 || back.Findings[0].File != "a.yaml" || back.Findings[1].Line != 3 {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
	empty := &conformance.Report{}
	table.Reset()
	_ = empty.WriteTable(&table)
	if !strings.Contains(table.String(), "PASS: 0 error(s), 0 warning(s)") {
		t.Errorf("empty report: %s", table.String())
	}
}
