package sdkcompat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// Tool is the apidiff binary that tools/go.mod pins (its `tool` line).
type Tool struct {
	// Path of the executable.
	Path string
}

// FindTool returns the pinned apidiff: `go tool -n apidiff` in toolsDir
// (the directory of tools/go.mod) builds it into the Go build cache, or
// finds it there, and prints its path. GOWORK=off, so that tools/go.mod
// alone decides the versions it is built from.
func FindTool(ctx context.Context, toolsDir string) (Tool, error) {
	cmd := exec.CommandContext(ctx, "go", "tool", "-n", "apidiff")
	cmd.Dir = toolsDir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Tool{}, fmt.Errorf("go tool -n apidiff in %s: %v: %s", toolsDir, err, strings.TrimSpace(stderr.String()))
	}
	path := strings.TrimSpace(stdout.String())
	if path == "" {
		return Tool{}, fmt.Errorf("go tool -n apidiff in %s printed no path", toolsDir)
	}
	return Tool{Path: path}, nil
}

// ModulePath reads the module path from moduleDir/go.mod.
func ModulePath(moduleDir string) (string, error) {
	name := filepath.Join(moduleDir, "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	path := modfile.ModulePath(data)
	if path == "" {
		return "", fmt.Errorf("%s names no module", name)
	}
	return path, nil
}

// run runs apidiff with args in moduleDir, module mode, outside the
// workspace (GOWORK=off): the module is loaded as its own go.mod says,
// wherever the directory is (the repository or a scratch copy). An exit
// status other than 0 is an error carrying apidiff's stderr.
func (t Tool) run(ctx context.Context, moduleDir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, t.Path, args...)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("apidiff %s (in %s): %v: %s", strings.Join(args, " "), moduleDir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// WriteExportData writes the export data of every package of the module
// in moduleDir to file: `apidiff -m -w file <module path>`, a zip archive
// of one gcexportdata entry per package (internal packages included;
// apidiff ignores them when comparing).
func (t Tool) WriteExportData(ctx context.Context, moduleDir, file string) error {
	modPath, err := ModulePath(moduleDir)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	_, err = t.run(ctx, moduleDir, "-m", "-w", abs, modPath)
	return err
}

// APIChange is one line of apidiff's report, as apidiff words it (e.g.
// "./backup/apply.Status: removed", "package cozystack.io/sdk/x: added").
type APIChange struct {
	Message    string `json:"message"`
	Compatible bool   `json:"compatible"`
}

// Diff compares the module in moduleDir against the export data in
// baseline: `apidiff -m baseline <module path>`. It returns apidiff's
// report as printed and its changes; an error is one of loading (a
// package that does not compile, a baseline that does not read).
func (t Tool) Diff(ctx context.Context, moduleDir, baseline string) (string, []APIChange, error) {
	modPath, err := ModulePath(moduleDir)
	if err != nil {
		return "", nil, err
	}
	abs, err := filepath.Abs(baseline)
	if err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", nil, err
	}
	text, err := t.run(ctx, moduleDir, "-m", abs, modPath)
	if err != nil {
		return "", nil, err
	}
	changes, err := ParseAPIReport(text)
	return text, changes, err
}

// ParseAPIReport reads apidiff's text report: an optional section
// "Incompatible changes:" and an optional section "Compatible changes:",
// each a list of "- message" lines. A line that starts no item continues
// the item above; text before any section is an error, so a report format
// this code does not know fails the check instead of passing it.
func ParseAPIReport(text string) ([]APIChange, error) {
	var (
		changes    []APIChange
		section    = ""
		compatible bool
	)
	for i, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		switch {
		case l == "":
			continue
		case l == "Incompatible changes:":
			section, compatible = l, false
		case l == "Compatible changes:":
			section, compatible = l, true
		case section == "":
			return nil, fmt.Errorf("apidiff report line %d: %q is in no section", i+1, l)
		case strings.HasPrefix(l, "- "):
			changes = append(changes, APIChange{Message: strings.TrimPrefix(l, "- "), Compatible: compatible})
		case len(changes) > 0:
			changes[len(changes)-1].Message += "\n" + l
		default:
			return nil, errors.New("apidiff report: a section starts with no item")
		}
	}
	return changes, nil
}
