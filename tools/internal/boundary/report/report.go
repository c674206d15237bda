package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"

	"cozystack.io/tools/internal/boundary/config"
	"cozystack.io/tools/internal/boundary/edge"
)

// Report is one run of the linter over one tree.
type Report struct {
	Root    string          `json:"root" yaml:"root"`
	Config  string          `json:"config" yaml:"config"`
	Modules []config.Module `json:"modules" yaml:"modules"`
	Edges   []edge.Edge     `json:"edges" yaml:"edges"`
	Summary Summary         `json:"summary" yaml:"summary"`
}

// Summary counts the edges, in all and by rule.
type Summary struct {
	Edges     int         `json:"edges" yaml:"edges"`
	Allowed   int         `json:"allowed" yaml:"allowed"`
	Forbidden int         `json:"forbidden" yaml:"forbidden"`
	ByRule    []RuleCount `json:"byRule" yaml:"byRule"`
	Instead   Instead     `json:"instead" yaml:"instead"`
}

// Instead counts the edges that carry a replacement: those the contracts
// offer something for, and those they do not yet.
type Instead struct {
	Offered int `json:"offered" yaml:"offered"`
	NoneYet int `json:"noneYet" yaml:"noneYet"`
}

// RuleCount is the number of allowed and forbidden edges one rule found.
type RuleCount struct {
	Rule      edge.Rule `json:"rule" yaml:"rule"`
	Allowed   int       `json:"allowed" yaml:"allowed"`
	Forbidden int       `json:"forbidden" yaml:"forbidden"`
}

// New sorts the edges and counts them. Every rule appears in ByRule, with
// zeros when it found nothing, so the shape does not depend on the tree.
func New(root, configFile string, modules []config.Module, edges []edge.Edge) *Report {
	if edges == nil {
		edges = []edge.Edge{}
	}
	edge.Sort(edges)
	r := &Report{Root: root, Config: configFile, Modules: modules, Edges: edges}
	if r.Config == "" {
		r.Config = "(inferred)"
	}
	counts := map[edge.Rule]*RuleCount{}
	for _, rule := range edge.Rules {
		r.Summary.ByRule = append(r.Summary.ByRule, RuleCount{Rule: rule})
	}
	for i := range r.Summary.ByRule {
		counts[r.Summary.ByRule[i].Rule] = &r.Summary.ByRule[i]
	}
	for _, e := range edges {
		r.Summary.Edges++
		c := counts[e.Rule]
		switch {
		case e.Instead == nil:
		case e.Instead.Offer == edge.NoneYet:
			r.Summary.Instead.NoneYet++
		default:
			r.Summary.Instead.Offered++
		}
		if e.Allowed {
			r.Summary.Allowed++
			c.Allowed++
		} else {
			r.Summary.Forbidden++
			c.Forbidden++
		}
	}
	return r
}

// Forbidden returns the edges the configuration does not allow.
func (r *Report) Forbidden() []edge.Edge {
	var out []edge.Edge
	for _, e := range r.Edges {
		if !e.Allowed {
			out = append(out, e)
		}
	}
	return out
}

// Format is an output format of the command line.
type Format string

// The formats.
const (
	Table Format = "table"
	JSON  Format = "json"
	YAML  Format = "yaml"
)

// Write prints the report in one format. forbiddenOnly leaves the allowed
// edges out of the table (never out of JSON or YAML, nor the summary).
func (r *Report) Write(w io.Writer, f Format, forbiddenOnly bool) error {
	switch f {
	case Table:
		return r.writeTable(w, forbiddenOnly)
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case YAML:
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		if err := enc.Encode(r); err != nil {
			return err
		}
		return enc.Close()
	}
	return fmt.Errorf("unknown output format %q (table, json, yaml)", f)
}

func (r *Report) writeTable(w io.Writer, forbiddenOnly bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	shown := 0
	for _, e := range r.Edges {
		if forbiddenOnly && e.Allowed {
			continue
		}
		if shown == 0 {
			fmt.Fprintln(tw, "STATUS\tRULE\tFROM\tTO\tLOCATION\tTARGET\tINSTEAD\tREASON")
		}
		shown++
		status, to, location, instead := "allowed", e.To, e.File, "-"
		if !e.Allowed {
			status = "FORBIDDEN"
		}
		if to == "" {
			to = "-"
		}
		if e.Line > 0 {
			location += ":" + strconv.Itoa(e.Line)
		}
		if e.Instead != nil {
			instead = e.Instead.Offer
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", status, e.Rule, e.From, to, location, e.Target, instead, oneLine(e.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if shown > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%s: %d modules, config %s\n", r.Root, len(r.Modules), r.Config)
	fmt.Fprintf(w, "edges: %d (allowed %d, forbidden %d)\n", r.Summary.Edges, r.Summary.Allowed, r.Summary.Forbidden)
	fmt.Fprintf(w, "%-21s %8s %10s\n", "RULE", "ALLOWED", "FORBIDDEN")
	for _, c := range r.Summary.ByRule {
		fmt.Fprintf(w, "%-21s %8d %10d\n", c.Rule, c.Allowed, c.Forbidden)
	}
	if i := r.Summary.Instead; i.Offered+i.NoneYet > 0 {
		fmt.Fprintf(w, "instead of the forbidden lookups and Capabilities checks: %d offered by the contracts, %d none yet\n", i.Offered, i.NoneYet)
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
