package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cozystack.io/tools/internal/boundary/edge"

	"cozystack.io/contracts/doctest"
)

const tree = "../../internal/boundary/testdata/tree"

func TestExitCodes(t *testing.T) {
	bad := t.TempDir()
	if err := os.CopyFS(bad, os.DirFS(tree)); err != nil {
		t.Fatal(err)
	}
	lookup := filepath.Join(bad, "platform/charts/tenant/templates/lookup.yaml")
	if err := os.WriteFile(lookup, []byte(`{{ lookup "kubevirt.io/v1" "VirtualMachine" "" "" }}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A chart with a dangling symbolic link.
	links := t.TempDir()
	if err := os.CopyFS(links, os.DirFS(tree)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing.tpl", filepath.Join(links, "platform/charts/tenant/templates/_gone.tpl")); err != nil {
		t.Fatal(err)
	}
	badConfig := filepath.Join(t.TempDir(), "boundaries.yaml")
	if err := os.WriteFile(badConfig, []byte("modules: [{name: a, path: a}]\nnope: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"clean tree", []string{"--root", tree}, 0, "edges: 8 (allowed 8, forbidden 0)", ""},
		{"forbidden edge", []string{"--root", bad, "--forbidden-only"}, 1, "FORBIDDEN  helm-lookup", ""},
		{"inferred", []string{"--root", tree, "--infer"}, 1, "config (inferred)", ""},
		{"verbose", []string{"--root", tree, "-v"}, 0, "", "scanned " + tree + " in "},
		{"bad output", []string{"--root", tree, "-o", "xml"}, 2, "", "want table, json or yaml"},
		{"bad flag", []string{"--nope"}, 2, "", "unknown flag"},
		{"argument", []string{"extra"}, 2, "", "unknown command"},
		{"bad config", []string{"--root", tree, "--config", badConfig}, 2, "", "field nope not found"},
		{"missing root", []string{"--root", filepath.Join(bad, "missing")}, 2, "", "is not a directory"},
		{"module paths matching nothing", []string{"--root", "../../internal/boundary/testdata/wrong-path"}, 2, "",
			"module paths match nothing in ../../internal/boundary/testdata/wrong-path: catalogs/db (path catalog/db: not found), catalogs/vm (path catalogs/vm: not found)"},
		{"symbolic link finding", []string{"--root", links, "--forbidden-only"}, 1, "FORBIDDEN  chart-symlink", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout.String(), stderr.String())
			}
		})
	}
}

func TestJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--root", tree, "-o", "json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out struct {
		Edges []struct {
			Rule    string `json:"rule"`
			File    string `json:"file"`
			Line    int    `json:"line"`
			Allowed bool   `json:"allowed"`
		} `json:"edges"`
		Summary struct {
			Edges, Forbidden int
		} `json:"summary"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Summary.Edges != 8 || out.Summary.Forbidden != 0 || len(out.Edges) != 8 || out.Edges[0].File == "" || out.Edges[0].Line == 0 {
		t.Errorf("json: %+v", out)
	}
}

// -o json carries what the contracts offer instead of each forbidden
// lookup and Capabilities check, and the count of both kinds.
func TestJSONInstead(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--root", "../../internal/boundary/testdata/instead", "-o", "json"}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out struct {
		Edges []struct {
			Rule    string `json:"rule"`
			Target  string `json:"target"`
			Instead *struct {
				Offer string   `json:"offer"`
				K2    []string `json:"k2"`
				K3    []string `json:"k3"`
			} `json:"instead"`
		} `json:"edges"`
		Summary struct {
			Instead struct{ Offered, NoneYet int } `json:"instead"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Edges) != 7 || out.Summary.Instead.Offered != 5 || out.Summary.Instead.NoneYet != 2 {
		t.Fatalf("json: %+v", out)
	}
	first := out.Edges[0]
	if first.Instead == nil || first.Instead.Offer != "K3 storage.snapshots" || len(first.Instead.K3) != 1 || first.Instead.K3[0] != "storage.snapshots" {
		t.Errorf("first edge: %+v %+v", first, first.Instead)
	}
}

// docs/contributor/boundaries.md's "Module boundaries" matches the linter: every
// command it shows runs (from the repository root) without a usage error,
// every output it shows is the output, and its table of rules and the
// --help text list exactly the rules the linter has.
func TestREADME(t *testing.T) {
	section := doctest.Section(t, "docs/contributor/boundaries.md", "Module boundaries")
	var help bytes.Buffer
	run([]string{"--help"}, &help, &bytes.Buffer{})
	t.Chdir("../../..")

	const prefix = "go run ./tools/cmd/cozystack-boundaries"
	commands, outputs := 0, 0
	lines := strings.Split(section, "\n")
	for i := 0; i < len(lines); i++ {
		switch {
		case lines[i] == "```sh":
			for i++; lines[i] != "```"; i++ {
				cmd, _, _ := strings.Cut(lines[i], "#")
				args, ok := strings.CutPrefix(strings.TrimSpace(cmd), prefix)
				if !ok {
					t.Errorf("docs/contributor/boundaries.md: not a command of the linter: %q", lines[i])
					continue
				}
				commands++
				var stdout, stderr bytes.Buffer
				if code := run(strings.Fields(args), &stdout, &stderr); code > 1 {
					t.Errorf("docs/contributor/boundaries.md: %s: exit %d: %s", lines[i], code, stderr.String())
				}
			}
		case lines[i] == "```console":
			i++
			args, ok := strings.CutPrefix(lines[i], "$ "+prefix)
			if !ok {
				t.Errorf("docs/contributor/boundaries.md: console block without a command of the linter: %q", lines[i])
				continue
			}
			var want []string
			for i++; lines[i] != "```"; i++ {
				want = append(want, lines[i])
			}
			outputs++
			var stdout, stderr bytes.Buffer
			run(strings.Fields(args), &stdout, &stderr)
			if got := strings.TrimSuffix(stdout.String(), "\n"); got != strings.Join(want, "\n") {
				t.Errorf("docs/contributor/boundaries.md: the output of %s is\n%s\nnot what the document shows:\n%s", lines[i-len(want)-1], got, strings.Join(want, "\n"))
			}
		}
	}
	if commands == 0 || outputs == 0 {
		t.Errorf("docs/contributor/boundaries.md: %d commands and %d outputs found", commands, outputs)
	}

	var documented []edge.Rule
	for _, line := range lines {
		if rule, ok := strings.CutPrefix(line, "| `"); ok {
			rule, _, _ = strings.Cut(rule, "`")
			documented = append(documented, edge.Rule(rule))
		}
	}
	if !slices.Equal(documented, edge.Rules) {
		t.Errorf("docs/contributor/boundaries.md's rules %v, the linter's %v", documented, edge.Rules)
	}
	for _, rule := range edge.Rules {
		if !strings.Contains(help.String(), string(rule)) {
			t.Errorf("--help does not name rule %s", rule)
		}
	}
}
