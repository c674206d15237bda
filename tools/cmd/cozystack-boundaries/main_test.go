package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
