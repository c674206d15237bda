package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cozystack.io/tools/internal/sdkcompat"

	"cozystack.io/contracts/doctest"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := execute(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestUsage: a missing or unknown command, an argument, a bad -o, an
// unknown flag, and a root without the SDK exit 2 with "error: ...".
func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"nope"},
		{"check", "extra"},
		{"check", "-o", "yaml"},
		{"check", "--nope"},
		{"check", "--root", t.TempDir()},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != exitUsage || !strings.HasPrefix(stderr, "error: ") {
			t.Errorf("%v: exit %d, stderr %q; want %d and an error", args, code, stderr, exitUsage)
		}
	}
}

// tinyRepo is a repository with this repository's tools/ (the pinned
// apidiff) and a copy of the tiny SDK of tools/internal/sdkcompat.
func tinyRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	tools, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tools, filepath.Join(root, "tools")); err != nil {
		t.Fatal(err)
	}
	if err := sdkcompat.CopyTree(filepath.Join("..", "..", "internal", "sdkcompat", "testdata", "sdk"), filepath.Join(root, "sdk")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestCommands: baseline, check and canary through the command line, with
// their exit statuses and JSON output.
func TestCommands(t *testing.T) {
	root := tinyRepo(t)
	if code, out, stderr := runCLI(t, "--root", root, "baseline"); code != 0 || !strings.Contains(out, "wrote sdk/compat/v0.1.0") {
		t.Fatalf("baseline: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(t, "--root", root, "check"); code != 0 || !strings.Contains(out, "ok: no incompatible change") {
		t.Fatalf("check: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(t, "--root", root, "canary"); code != 0 || !strings.Contains(out, "ok: ") {
		t.Fatalf("canary: exit %d\n%s%s", code, out, stderr)
	}
	if err := os.Remove(filepath.Join(root, "sdk", "backup", "api", "helpers.go")); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "--root", root, "check")
	if code != exitIncompatible || !strings.Contains(out, "- ./backup/api.Valid: removed") || !strings.Contains(out, "FAIL: 1 incompatible") {
		t.Fatalf("check after a removal: exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = runCLI(t, "--root", root, "check", "-o", "json")
	var r sdkcompat.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitIncompatible || len(r.Incompatible()) != 1 {
		t.Fatalf("check -o json: exit %d, %v\n%s", code, err, out)
	}
	// The canary's first step fails on a tree that is incompatible already.
	if code, out, _ := runCLI(t, "--root", root, "canary", "-o", "json"); code != exitIncompatible {
		t.Fatalf("canary on an incompatible tree: exit %d\n%s", code, out)
	}
}

// TestREADME: sdk/backup/README.md's "SDK compatibility" names every command of
// cozystack-sdkcompat, its global flags, and the exit statuses of doc.go.
func TestREADME(t *testing.T) {
	section := doctest.Section(t, "sdk/backup/README.md", "SDK compatibility")
	rows := regexp.MustCompile("(?m)^\\| `([a-z]+)` \\|").FindAllStringSubmatch(section, -1)
	var documented []string
	for _, m := range rows {
		documented = append(documented, m[1])
	}
	var commands []string
	for _, c := range newRoot().Commands() {
		commands = append(commands, c.Name())
	}
	slices.Sort(documented)
	slices.Sort(commands)
	if !slices.Equal(documented, commands) {
		t.Errorf("sdk/backup/README.md documents the commands %v; cozystack-sdkcompat has %v", documented, commands)
	}
	for _, want := range []string{"`--root`", "`-o table|json`", "0 ok", "1 an incompatible change", "2 a usage or setup"} {
		if !strings.Contains(strings.Join(strings.Fields(section), " "), want) {
			t.Errorf("sdk/backup/README.md's SDK compatibility does not say %q", want)
		}
	}
}
