package edge

import (
	"cmp"
	"slices"
)

// Rule is the ID of the check that found an edge. The IDs are stable: they
// appear in the table and JSON output and in the README.
type Rule string

// The rules. Each names the kind of reference, not a severity: whether an
// edge is allowed is decided by the configuration (boundaries.yaml).
const (
	// GoImport is a Go import of a package of another workspace module.
	GoImport Rule = "go-import"
	// GoParse is a Go file whose import block does not parse; its imports
	// are unknown, so it counts as forbidden.
	GoParse Rule = "go-parse"
	// HelmInclude is `include "x"` or `template "x"` where "x" is defined
	// (`define "x"`) in a chart of another module.
	HelmInclude Rule = "helm-include"
	// UnknownInclude is `include "x"` or `template "x"` where "x" is defined
	// in no chart of the tree, vendored dependencies included.
	UnknownInclude Rule = "unknown-include"
	// DynamicInclude is an include whose name is computed at render time
	// (`include (printf "%s.x" .Values.y)`) and could not be resolved
	// statically, so where it points is unknown.
	DynamicInclude Rule = "dynamic-include"
	// HelmLookup is `lookup "group/version" ...` on a group another module owns.
	HelmLookup Rule = "helm-lookup"
	// DynamicLookup is a lookup whose apiVersion is computed at render time
	// (`lookup $apiVersion ...`) and could not be resolved statically.
	DynamicLookup Rule = "dynamic-lookup"
	// HelmCapabilities is `.Capabilities.APIVersions.Has "group/version"` on
	// a group another module owns.
	HelmCapabilities Rule = "helm-capabilities"
	// DynamicCapabilities is `.Capabilities.APIVersions.Has $x` whose
	// argument could not be resolved statically.
	DynamicCapabilities Rule = "dynamic-capabilities"
	// ChartDependency is a Chart.yaml dependency on a chart of another
	// module: a file:// path into it, or the name of a chart it owns.
	ChartDependency Rule = "chart-dependency"
	// ChartSymlink is a symbolic link the linter cannot follow as Helm's
	// loader would: it dangles, loops back into a directory that holds it,
	// or leaves the scanned tree (whose content then has no module).
	ChartSymlink Rule = "chart-symlink"
	// CRDKind is `apiVersion: group/version` in a template, for a group
	// another module owns.
	CRDKind Rule = "crd-kind"
	// TemplateParse is a template file that text/template/parse rejects
	// with Helm's functions; its edges were then found by a regex scan.
	TemplateParse Rule = "template-parse"
)

// Rules lists every rule in the order the summary prints them.
var Rules = []Rule{
	GoImport, GoParse,
	HelmInclude, UnknownInclude, DynamicInclude,
	HelmLookup, DynamicLookup, HelmCapabilities, DynamicCapabilities,
	ChartDependency, ChartSymlink, CRDKind, TemplateParse,
}

// Unresolved reports whether the rule's findings have no target module:
// the linter could not tell where the reference points, so the
// configuration cannot allow them and they always count as forbidden.
func (r Rule) Unresolved() bool {
	switch r {
	case GoParse, UnknownInclude, DynamicInclude, DynamicLookup, DynamicCapabilities, ChartSymlink, TemplateParse:
		return true
	}
	return false
}

// ChartRef is the Chart.yaml dependency an edge goes through, when it goes
// through one: the published-chart exception of the configuration is judged
// on it.
type ChartRef struct {
	Name       string `json:"name" yaml:"name"`
	Version    string `json:"version,omitempty" yaml:"version,omitempty"`
	Repository string `json:"repository,omitempty" yaml:"repository,omitempty"`
}

// Replacement is what the contracts offer instead of a forbidden
// helm-lookup or helm-capabilities edge: K2 cluster-values keys a chart
// reads from its values, K3 properties a catalog requires, or nothing yet.
type Replacement struct {
	// Offer is the one-line form: "K2 _cluster.gateway-api; K3
	// storage.snapshots", or "none yet" when the contracts offer nothing.
	Offer string   `json:"offer" yaml:"offer"`
	K2    []string `json:"k2,omitempty" yaml:"k2,omitempty"`
	K3    []string `json:"k3,omitempty" yaml:"k3,omitempty"`
	// Note says how to use the offer, or what is missing.
	Note string `json:"note,omitempty" yaml:"note,omitempty"`
}

// NoneYet is the Offer of a Replacement the contracts do not have yet.
const NoneYet = "none yet"

// Edge is one reference that crosses a module boundary, or a finding the
// linter could not resolve (rules whose Unresolved is true; To is empty).
type Edge struct {
	Rule Rule `json:"rule" yaml:"rule"`
	// From and To are module names from the configuration.
	From string `json:"from" yaml:"from"`
	To   string `json:"to,omitempty" yaml:"to,omitempty"`
	// File is slash-separated and relative to the scanned root; Line is
	// 1-based, or 0 when the finding is about the path itself (a symlink).
	File string `json:"file" yaml:"file"`
	Line int    `json:"line" yaml:"line"`
	// Target is what is referenced: an import path, a template name, a
	// group/version (with the kind when known), or a chart name.
	Target string `json:"target" yaml:"target"`
	// Definition is where the target lies, when the linter knows: the
	// file:line of a define, or the chart a dependency resolves to.
	Definition string `json:"definition,omitempty" yaml:"definition,omitempty"`
	// Via is the chart dependency the reference goes through, if any.
	Via *ChartRef `json:"via,omitempty" yaml:"via,omitempty"`
	// Allowed and Reason are set by config.Config.Judge.
	Allowed bool   `json:"allowed" yaml:"allowed"`
	Reason  string `json:"reason" yaml:"reason"`
	// Instead is set on forbidden helm-lookup and helm-capabilities edges:
	// what the contracts offer in their place.
	Instead *Replacement `json:"instead,omitempty" yaml:"instead,omitempty"`
}

// Sort orders edges by file, line, rule and target, so output is stable.
func Sort(edges []Edge) {
	slices.SortStableFunc(edges, func(a, b Edge) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Target, b.Target),
			cmp.Compare(a.To, b.To),
		)
	})
}
