package conformance

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Severity of a finding: an error fails the suite, a warning does not.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Finding is one violation of a contract rule.
type Finding struct {
	// RuleID names the rule, e.g. K2-unknown-key (see Rules).
	RuleID   string   `json:"rule"`
	Severity Severity `json:"severity"`
	// File is the file's path relative to the catalog (a catalog
	// directory, or an artifact whose charts are under their chart paths).
	File string `json:"file"`
	// Line is the 1-based line in File, 0 when unknown.
	Line int `json:"line,omitempty"`
	// Path is the object path within File: a field path
	// (spec.dashboard.keysOrder[3]), a JSON pointer into a schema
	// (#/properties/users), or both
	// (spec.application.openAPISchema#/properties/size).
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	// Fix says what to change, and where.
	Fix string `json:"fix"`
}

// Location is "file:line" or "file", with " path" when set.
func (f Finding) Location() string {
	loc := f.File
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, f.Line)
	}
	if f.Path != "" {
		loc += " " + f.Path
	}
	return loc
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s %s: %s; fix: %s", f.Severity, f.RuleID, f.Location(), f.Message, f.Fix)
}

// Report is the result of the checks of one catalog against one platform
// version.
type Report struct {
	// Source is the catalog directory or the artifact reference checked.
	Source string `json:"source"`
	// Catalog and Version are from its catalog.yaml, when it decoded.
	Catalog string `json:"catalog,omitempty"`
	Version string `json:"version,omitempty"`
	// PlatformVersion is the platform checked against; ContractVersion the
	// contract version it implements and ContractDigest the digest of that
	// version's embedded files (schemas.Digest).
	PlatformVersion string `json:"platformVersion"`
	ContractVersion string `json:"contractVersion"`
	ContractDigest  string `json:"contractDigest"`
	// Previous is the earlier catalog version the K4 cross-version rules
	// compared with, if any.
	Previous string `json:"previous,omitempty"`
	// Skipped names checks that did not run, and why.
	Skipped []string `json:"skipped,omitempty"`
	// Findings, sorted by file, line, rule and path.
	Findings []Finding `json:"findings"`
}

// Errors returns the findings of severity Error.
func (r *Report) Errors() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity == Error {
			out = append(out, f)
		}
	}
	return out
}

// Passed is true when no finding is an error.
func (r *Report) Passed() bool { return len(r.Errors()) == 0 }

func (r *Report) add(fs ...Finding) { r.Findings = append(r.Findings, fs...) }

// Merge adds findings (e.g. Live's) to the report, keeping the order.
func (r *Report) Merge(fs []Finding) {
	r.add(fs...)
	r.sort()
}

func (r *Report) sort() {
	sortFindings(r.Findings)
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
}

func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.RuleID, b.RuleID),
			cmp.Compare(a.Path, b.Path), cmp.Compare(a.Message, b.Message))
	})
}

// WriteTable writes the report for people: a header, one row per finding
// (severity, rule, location, message) with its fix below, and a summary.
func (r *Report) WriteTable(w io.Writer) error {
	name := r.Source
	if r.Catalog != "" {
		name = fmt.Sprintf("%s %s (%s)", r.Catalog, r.Version, r.Source)
	}
	fmt.Fprintf(w, "Catalog:  %s\nPlatform: %s (contracts %s, %s)\n", name, r.PlatformVersion, r.ContractVersion, r.ContractDigest)
	if r.Previous != "" {
		fmt.Fprintf(w, "Previous: %s\n", r.Previous)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "Skipped:  %s\n", s)
	}
	fmt.Fprintln(w)
	if len(r.Findings) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SEVERITY\tRULE\tLOCATION\tMESSAGE")
		for _, f := range r.Findings {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Severity, f.RuleID, f.Location(), oneLine(f.Message))
			fmt.Fprintf(tw, "\t\t\tfix: %s\n", oneLine(f.Fix))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	errs := len(r.Errors())
	verdict := "PASS"
	if errs > 0 {
		verdict = "FAIL"
	}
	_, err := fmt.Fprintf(w, "%s: %d error(s), %d warning(s)\n", verdict, errs, len(r.Findings)-errs)
	return err
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(data))
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
