package sdkcompat

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The layout of the SDK module's compatibility files.
const (
	// VersionFile holds the SDK's version, in the module directory.
	VersionFile = "VERSION"
	// CompatDir holds a directory v<version> per release baseline and
	// decisions/, in the module directory.
	CompatDir = "compat"
	// APIFile is the export data of every package of the module in a
	// baseline directory (apidiff -m -w).
	APIFile = "sdk.apidiff"
	// PackagesFile lists the packages APIFile holds, one a line, for
	// people reading a baseline's diff.
	PackagesFile = "packages.txt"
	// BaselineCRDDir holds the copies of the CRDs in a baseline directory.
	BaselineCRDDir = "crds"
	// CRDDir is where the module keeps its CRDs.
	CRDDir = "backup/crds"
	// Group is the API group whose CRDs are compared.
	Group = "backups.cozystack.io"
)

// Options say which module to check and with which apidiff.
type Options struct {
	// SDKDir is the module directory (the repository's sdk/, or a copy).
	SDKDir string
	// Tool is the pinned apidiff (FindTool).
	Tool Tool
}

// Finding is one change between the baseline and the tree.
type Finding struct {
	// Area is "go" (apidiff) or "crd" (DiffCRDs).
	Area string `json:"area"`
	// Change is apidiff's line, or CRDChange.String(): what a decision
	// file lists, in backquotes, to accept it.
	Change     string `json:"change"`
	Compatible bool   `json:"compatible"`
	// Accepted: an incompatible change that the decision file of
	// sdk/VERSION lists, with sdk/VERSION a breaking bump of the baseline.
	Accepted bool `json:"accepted,omitempty"`
}

// Verdict is "compatible", "accepted" or "incompatible".
func (f Finding) Verdict() string {
	switch {
	case f.Compatible:
		return "compatible"
	case f.Accepted:
		return "accepted"
	}
	return "incompatible"
}

// Result is what Check (and Baseline, before it writes) found.
type Result struct {
	// Module is the module directory checked.
	Module string `json:"module"`
	// Version is sdk/VERSION; Baseline the release compared against.
	Version  string `json:"version"`
	Baseline string `json:"baseline"`
	// DecisionFile is the decision file of Version, when it exists.
	DecisionFile string `json:"decisionFile,omitempty"`
	// APIReport is apidiff's report as it printed it.
	APIReport string    `json:"apidiffReport"`
	Findings  []Finding `json:"findings"`
	// Problems fail the result besides incompatible findings (a version
	// that does not follow the versioning rule).
	Problems []string `json:"problems,omitempty"`
	// Notes inform and fail nothing.
	Notes []string `json:"notes,omitempty"`
}

// Incompatible lists the incompatible findings no decision accepts.
func (r *Result) Incompatible() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if !f.Compatible && !f.Accepted {
			out = append(out, f)
		}
	}
	return out
}

// OK: no unaccepted incompatible finding and no problem.
func (r *Result) OK() bool { return len(r.Incompatible()) == 0 && len(r.Problems) == 0 }

// Check compares the module in opts.SDKDir against the newest baseline
// not newer than its VERSION: the Go API with apidiff, the CRDs of Group
// with DiffCRDs. Compatible changes pass (a note says the next release
// needs a minor bump); an incompatible one fails unless VERSION is a
// breaking bump of the baseline (Version.BreakingBumpOf) and
// compat/decisions/v<VERSION>.md lists it in backquotes. The error is a
// setup error: no VERSION, no baseline, a baseline newer than VERSION, a
// package that does not compile, a file that does not read.
func Check(ctx context.Context, opts Options) (*Result, error) {
	v, err := ReadVersion(opts.SDKDir)
	if err != nil {
		return nil, err
	}
	baselines, err := Baselines(opts.SDKDir)
	if err != nil {
		return nil, err
	}
	var base *Version
	for i := range baselines {
		if baselines[i].Compare(v) > 0 {
			return nil, fmt.Errorf("sdk/VERSION %s is older than the baseline %s", v, BaselineDir(opts.SDKDir, baselines[i]))
		}
		base = &baselines[i]
	}
	if base == nil {
		return nil, fmt.Errorf("no baseline in %s: cut one with `make sdk-baseline`", filepath.Join(opts.SDKDir, CompatDir))
	}
	return compare(ctx, opts, *base, v, false)
}

// compare diffs the module against base's baseline, judged for version v;
// strict (for a new baseline): additions need a minor bump of base.
func compare(ctx context.Context, opts Options, base, v Version, strict bool) (*Result, error) {
	dir := BaselineDir(opts.SDKDir, base)
	r := &Result{Module: opts.SDKDir, Version: v.String(), Baseline: base.String()}
	text, changes, err := opts.Tool.Diff(ctx, opts.SDKDir, filepath.Join(dir, APIFile))
	if err != nil {
		return nil, err
	}
	r.APIReport = text
	for _, c := range changes {
		r.Findings = append(r.Findings, Finding{Area: "go", Change: c.Message, Compatible: c.Compatible})
	}
	oldCRDs, err := LoadCRDs(filepath.Join(dir, BaselineCRDDir), Group)
	if err != nil {
		return nil, err
	}
	curCRDs, err := LoadCRDs(filepath.Join(opts.SDKDir, filepath.FromSlash(CRDDir)), Group)
	if err != nil {
		return nil, err
	}
	for _, c := range DiffCRDs(oldCRDs, curCRDs) {
		r.Findings = append(r.Findings, Finding{Area: "crd", Change: c.String(), Compatible: c.Compatible})
	}

	decisions := ""
	decisionFile := DecisionFile(opts.SDKDir, v)
	if data, err := os.ReadFile(decisionFile); err == nil {
		decisions = string(data)
		r.DecisionFile = decisionFile
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	breaking := v.BreakingBumpOf(base)
	compatible, incompatible := 0, 0
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Compatible {
			compatible++
			continue
		}
		incompatible++
		listed := decisions != "" && strings.Contains(decisions, "`"+f.Change+"`")
		switch {
		case listed && breaking:
			f.Accepted = true
		case listed:
			r.Problems = append(r.Problems, fmt.Sprintf("%s accepts %q, but sdk/VERSION %s is no breaking bump of %s: it must be at least %s", decisionFile, f.Change, v, base, base.NextBreaking()))
		}
	}
	if n := len(r.Incompatible()); n > 0 {
		next := v
		if !breaking {
			next = base.NextBreaking()
		}
		r.Notes = append(r.Notes, fmt.Sprintf("to accept an incompatible change (a decision, not a default): set sdk/VERSION to at least %s and list each change, in backquotes, with the reason, in %s", next, DecisionFile(opts.SDKDir, next)))
	}
	if compatible > 0 && !v.MinorBumpOf(base) {
		msg := fmt.Sprintf("%d compatible change(s) since %s: the next release must be at least %s (sdk/VERSION is %s)", compatible, base, base.NextMinor(), v)
		if strict {
			r.Problems = append(r.Problems, msg)
		} else {
			r.Notes = append(r.Notes, msg)
		}
	}
	if incompatible == 0 && compatible == 0 && v.Compare(base) != 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("no change since %s", base))
	}
	return r, nil
}

// BaselineResult is what Baseline did.
type BaselineResult struct {
	// Check is the comparison with the previous baseline, when there is
	// one; a failing one stopped Baseline before it wrote anything.
	Check *Result `json:"check,omitempty"`
	// Dir is the baseline directory written (empty when refused);
	// Replaced says it held an earlier cut of the same version.
	Dir      string   `json:"dir,omitempty"`
	Replaced bool     `json:"replaced,omitempty"`
	Packages []string `json:"packages,omitempty"`
	CRDs     []string `json:"crds,omitempty"`
}

// Baseline cuts the baseline of the version in VERSION:
// compat/v<VERSION>/ with APIFile (apidiff -m -w over every package of the
// module), PackagesFile, and a copy of every *.yaml of CRDDir under
// BaselineCRDDir. A directory of that version is replaced whole (a re-cut).
// When an older baseline exists, the tree must first pass against it with
// the versioning rule enforced: additions need a minor bump, incompatible
// changes a breaking bump and a decision file; else nothing is written
// and the result's Check says why. The error is a setup error (as
// Check's, or a baseline newer than VERSION).
func Baseline(ctx context.Context, opts Options) (*BaselineResult, error) {
	v, err := ReadVersion(opts.SDKDir)
	if err != nil {
		return nil, err
	}
	baselines, err := Baselines(opts.SDKDir)
	if err != nil {
		return nil, err
	}
	res := &BaselineResult{}
	var prev *Version
	for i := range baselines {
		switch baselines[i].Compare(v) {
		case 1:
			return nil, fmt.Errorf("sdk/VERSION %s is older than the baseline %s", v, BaselineDir(opts.SDKDir, baselines[i]))
		case -1:
			prev = &baselines[i]
		}
	}
	if prev != nil {
		r, err := compare(ctx, opts, *prev, v, true)
		if err != nil {
			return nil, err
		}
		res.Check = r
		if !r.OK() {
			return res, nil
		}
	}

	dir := BaselineDir(opts.SDKDir, v)
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".cut-")
	if err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, err
		}
		if tmp, err = os.MkdirTemp(filepath.Dir(dir), ".cut-"); err != nil {
			return nil, err
		}
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := opts.Tool.WriteExportData(ctx, opts.SDKDir, filepath.Join(tmp, APIFile)); err != nil {
		return nil, err
	}
	if res.Packages, err = exportDataPackages(filepath.Join(tmp, APIFile)); err != nil {
		return nil, err
	}
	modPath, err := ModulePath(opts.SDKDir)
	if err != nil {
		return nil, err
	}
	list := fmt.Sprintf("# The packages of %s whose export data %s holds\n# (apidiff -m -w; cozystack-sdkcompat baseline wrote both).\n%s\n",
		modPath, APIFile, strings.Join(res.Packages, "\n"))
	if err := os.WriteFile(filepath.Join(tmp, PackagesFile), []byte(list), 0o644); err != nil {
		return nil, err
	}
	crds, err := filepath.Glob(filepath.Join(opts.SDKDir, filepath.FromSlash(CRDDir), "*.yaml"))
	if err != nil {
		return nil, err
	}
	slices.Sort(crds)
	if err := os.Mkdir(filepath.Join(tmp, BaselineCRDDir), 0o755); err != nil {
		return nil, err
	}
	for _, c := range crds {
		data, err := os.ReadFile(c)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(tmp, BaselineCRDDir, filepath.Base(c)), data, 0o644); err != nil {
			return nil, err
		}
		res.CRDs = append(res.CRDs, filepath.Base(c))
	}
	if _, err := os.Stat(dir); err == nil {
		res.Replaced = true
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, err
	}
	res.Dir = dir
	return res, nil
}

// exportDataPackages lists the package paths of a module export data file
// (its zip entries "<path>.x"), sorted.
func exportDataPackages(file string) ([]string, error) {
	z, err := zip.OpenReader(file)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	var out []string
	for _, f := range z.File {
		if p, ok := strings.CutSuffix(f.Name, ".x"); ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}
