package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"cozystack.io/tools/internal/boundary/config"
	"cozystack.io/tools/internal/boundary/edge"
)

func sample() *Report {
	return New("repo", "", []config.Module{{Name: "a", Path: "a"}, {Name: "b", Path: "b"}}, []edge.Edge{
		{Rule: edge.HelmLookup, From: "b", To: "a", File: "b/t.yaml", Line: 3, Target: "a.io/v1", Reason: "b → a is not an allowed edge"},
		{Rule: edge.GoImport, From: "a", To: "b", File: "a/x.go", Line: 9, Target: "example/b", Allowed: true, Reason: "a → b is allowed"},
		{Rule: edge.GoImport, From: "a", To: "b", File: "a/x.go", Line: 4, Target: "example/b/c", Allowed: true, Reason: "a → b is allowed"},
	})
}

func TestSummary(t *testing.T) {
	r := sample()
	if r.Summary.Edges != 3 || r.Summary.Allowed != 2 || r.Summary.Forbidden != 1 || r.Config != "(inferred)" {
		t.Errorf("summary %+v, config %q", r.Summary, r.Config)
	}
	if len(r.Summary.ByRule) != len(edge.Rules) {
		t.Errorf("byRule has %d rules, want all %d", len(r.Summary.ByRule), len(edge.Rules))
	}
	for _, c := range r.Summary.ByRule {
		if (c.Rule == edge.GoImport && (c.Allowed != 2 || c.Forbidden != 0)) || (c.Rule == edge.HelmLookup && c.Forbidden != 1) {
			t.Errorf("byRule %+v", c)
		}
	}
	if r.Edges[0].Line != 4 || r.Edges[1].Line != 9 || r.Edges[2].File != "b/t.yaml" {
		t.Errorf("edges not sorted by file and line: %+v", r.Edges)
	}
	if f := r.Forbidden(); len(f) != 1 || f[0].Rule != edge.HelmLookup {
		t.Errorf("forbidden %+v", f)
	}
	if empty := New("x", "boundaries.yaml", nil, nil); empty.Edges == nil {
		t.Error("edges must be [] in JSON, not null")
	}
}

func TestWrite(t *testing.T) {
	r := sample()
	var table, only, js, ym bytes.Buffer
	for _, w := range []struct {
		buf  *bytes.Buffer
		f    Format
		only bool
	}{{&table, Table, false}, {&only, Table, true}, {&js, JSON, false}, {&ym, YAML, false}} {
		if err := r.Write(w.buf, w.f, w.only); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(table.String(), "allowed    go-import") || !strings.Contains(table.String(), "FORBIDDEN  helm-lookup") ||
		!strings.Contains(table.String(), "edges: 3 (allowed 2, forbidden 1)") {
		t.Errorf("table:\n%s", table.String())
	}
	if strings.Contains(only.String(), "go-import  a") || !strings.Contains(only.String(), "FORBIDDEN") {
		t.Errorf("forbidden-only table:\n%s", only.String())
	}
	var fromJSON, fromYAML Report
	if err := json.Unmarshal(js.Bytes(), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(ym.Bytes(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	for _, got := range []Report{fromJSON, fromYAML} {
		if got.Summary.Forbidden != 1 || len(got.Edges) != 3 || got.Edges[2].Target != "a.io/v1" {
			t.Errorf("round trip: %+v", got)
		}
	}
	if err := r.Write(&bytes.Buffer{}, "xml", false); err == nil {
		t.Error("unknown format accepted")
	}
}

// A replacement is a column of the table and counted in the summary; a
// finding about a path (line 0) shows the path alone.
func TestInstead(t *testing.T) {
	r := New("repo", "boundaries.yaml", nil, []edge.Edge{
		{Rule: edge.HelmLookup, From: "b", To: "a", File: "b/t.yaml", Line: 3, Target: "a.io/v1 A", Instead: &edge.Replacement{Offer: "K3 storage.snapshots", K3: []string{"storage.snapshots"}}},
		{Rule: edge.HelmCapabilities, From: "b", To: "a", File: "b/t.yaml", Line: 4, Target: "a.io/v1", Instead: &edge.Replacement{Offer: edge.NoneYet}},
		{Rule: edge.ChartSymlink, From: "b", File: "b/charts/lib", Target: "../x", Reason: "dangling"},
	})
	if i := r.Summary.Instead; i.Offered != 1 || i.NoneYet != 1 {
		t.Errorf("instead %+v", i)
	}
	var table bytes.Buffer
	if err := r.Write(&table, Table, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"INSTEAD", "b/t.yaml:3    a.io/v1 A  K3 storage.snapshots", "b/t.yaml:4    a.io/v1    none yet",
		"b/charts/lib  ../x       -", "1 offered by the contracts, 1 none yet"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table has no %q:\n%s", want, table.String())
		}
	}
	if strings.Contains(table.String(), "b/charts/lib:0") {
		t.Errorf("a path finding shows line 0:\n%s", table.String())
	}
	var js bytes.Buffer
	if err := r.Write(&js, JSON, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"instead": {
        "offer": "K3 storage.snapshots",
        "k3": [`, `"noneYet": 1`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("json has no %q:\n%s", want, js.String())
		}
	}
}
