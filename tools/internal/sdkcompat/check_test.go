package sdkcompat

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tinySDK copies testdata/sdk (a module example.com/sdk with VERSION
// 0.1.0, one package and the CRDs of testdata/crd/baseline) into a
// temporary directory, with the pinned apidiff.
func tinySDK(t *testing.T) Options {
	t.Helper()
	tool, err := FindTool(context.Background(), filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sdk")
	if err := CopyTree(filepath.Join("testdata", "sdk"), dir); err != nil {
		t.Fatal(err)
	}
	return Options{SDKDir: dir, Tool: tool}
}

func write(t *testing.T, opts Options, file, content string) {
	t.Helper()
	p := filepath.Join(opts.SDKDir, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func changes(r *Result, verdict string) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Verdict() == verdict {
			out = append(out, f.Area+" "+f.Change)
		}
	}
	return out
}

// TestCheckAndBaseline runs the real pinned apidiff over a tiny module
// through a release cycle: no baseline is a setup error; a cut baseline
// passes; an addition passes with a note, and baseline refuses it without
// a minor bump; a removal (Go and CRD) fails; a decision file accepts it
// only with a breaking bump.
func TestCheckAndBaseline(t *testing.T) {
	ctx := context.Background()
	opts := tinySDK(t)

	if _, err := Check(ctx, opts); err == nil || !strings.Contains(err.Error(), "no baseline") {
		t.Fatalf("Check without a baseline: %v", err)
	}
	b, err := Baseline(ctx, opts)
	if err != nil || b.Dir == "" {
		t.Fatalf("Baseline: %+v, %v", b, err)
	}
	if want := []string{"example.com/sdk/backup/api"}; !slices.Equal(b.Packages, want) || len(b.CRDs) != 1 {
		t.Fatalf("baseline packages %v, CRDs %v", b.Packages, b.CRDs)
	}
	r, err := Check(ctx, opts)
	if err != nil || !r.OK() || len(r.Findings) != 0 {
		t.Fatalf("Check right after the baseline: %+v, %v", r, err)
	}

	// An addition: passes, with a note; no baseline for 0.1.1 (a patch).
	write(t, opts, "backup/api/added.go", "package api\n\n// Added is new.\nfunc Added() {}\n")
	r, err = Check(ctx, opts)
	if err != nil || !r.OK() || !slices.Equal(changes(r, "compatible"), []string{"go ./backup/api.Added: added"}) || len(r.Notes) != 1 {
		t.Fatalf("Check with an addition: %+v, %v", r, err)
	}
	write(t, opts, "VERSION", "0.1.1\n")
	if b, err := Baseline(ctx, opts); err != nil || b.Dir != "" || b.Check == nil || len(b.Check.Problems) != 1 {
		t.Fatalf("Baseline of 0.1.1 with an addition: %+v, %v", b, err)
	}
	if _, err := os.Stat(BaselineDir(opts.SDKDir, Version{0, 1, 1})); !os.IsNotExist(err) {
		t.Fatalf("a refused baseline left %v", err)
	}
	write(t, opts, "VERSION", "0.1.0\n")

	// Removals: a Go function and a CRD field.
	if err := os.Remove(filepath.Join(opts.SDKDir, "backup", "api", "helpers.go")); err != nil {
		t.Fatal(err)
	}
	crd := filepath.Join(opts.SDKDir, "backup", "crds", "backups.cozystack.io.yaml")
	data, err := os.ReadFile(crd)
	if err != nil {
		t.Fatal(err)
	}
	write(t, opts, "backup/crds/backups.cozystack.io.yaml", strings.Replace(string(data), "timeZone:", "tz:", 1))
	r, err = Check(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	wantIncompatible := []string{"go ./backup/api.Valid: removed", "crd Plan v1alpha1 .spec.schedule.timeZone: field removed"}
	if r.OK() || !slices.Equal(changes(r, "incompatible"), wantIncompatible) {
		t.Fatalf("Check with removals: incompatible %v, want %v", changes(r, "incompatible"), wantIncompatible)
	}
	if !strings.Contains(r.APIReport, "Incompatible changes:\n- ./backup/api.Valid: removed") {
		t.Errorf("apidiff's report: %q", r.APIReport)
	}

	// A decision file without a breaking bump: still failing.
	decision := "# v0.2.0\n\n- `./backup/api.Valid: removed`: a test.\n- `Plan v1alpha1 .spec.schedule.timeZone: field removed`: a test.\n"
	write(t, opts, "compat/decisions/v0.1.0.md", decision)
	r, err = Check(ctx, opts)
	if err != nil || r.OK() || len(r.Problems) != 2 {
		t.Fatalf("decision without a bump: %+v, %v", r, err)
	}
	// With the bump: accepted.
	write(t, opts, "VERSION", "0.2.0\n")
	write(t, opts, "compat/decisions/v0.2.0.md", decision)
	r, err = Check(ctx, opts)
	if err != nil || !r.OK() || len(changes(r, "accepted")) != 2 {
		t.Fatalf("decision with a bump: %+v, %v", r, err)
	}
	// Only what is listed.
	write(t, opts, "compat/decisions/v0.2.0.md", "- `./backup/api.Valid: removed`\n")
	r, err = Check(ctx, opts)
	if err != nil || r.OK() || !slices.Equal(changes(r, "incompatible"), wantIncompatible[1:]) {
		t.Fatalf("half a decision: %+v, %v", r, err)
	}
	// The next baseline, then VERSION may not go back.
	write(t, opts, "compat/decisions/v0.2.0.md", decision)
	if b, err := Baseline(ctx, opts); err != nil || b.Dir == "" {
		t.Fatalf("Baseline of 0.2.0: %+v, %v", b, err)
	}
	write(t, opts, "VERSION", "0.1.0\n")
	if _, err := Check(ctx, opts); err == nil || !strings.Contains(err.Error(), "older than the baseline") {
		t.Fatalf("VERSION older than a baseline: %v", err)
	}
}

// TestRunCanary: on the tiny module the canary passes; and when the check
// does not fail on the canary's removal (here a decision file accepts it
// in advance), the canary fails.
func TestRunCanary(t *testing.T) {
	ctx := context.Background()
	opts := tinySDK(t)
	if _, err := Baseline(ctx, opts); err != nil {
		t.Fatal(err)
	}
	r, err := RunCanary(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || len(r.Steps) != 3 {
		t.Fatalf("canary: %+v", r.Steps)
	}
	if !strings.Contains(r.Steps[1].Want, "./backup/api.NewPlan: removed") || !strings.Contains(r.Steps[2].Want, "Plan v1alpha1 .spec.applicationRef: field removed") {
		t.Errorf("canary steps: %+v", r.Steps)
	}
	// The repository's files are untouched: the canary edits a copy.
	if data, err := os.ReadFile(filepath.Join(opts.SDKDir, "backup", "api", "api.go")); err != nil || !strings.Contains(string(data), "func NewPlan") {
		t.Fatalf("the module itself changed: %v", err)
	}

	write(t, opts, "VERSION", "0.2.0\n")
	write(t, opts, "compat/decisions/v0.2.0.md", "- `./backup/api.NewPlan: removed`\n")
	r, err = RunCanary(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() || !r.Steps[0].OK || r.Steps[1].OK || !r.Steps[2].OK {
		t.Fatalf("canary with a check that passes the removal: %+v", r.Steps)
	}
}
