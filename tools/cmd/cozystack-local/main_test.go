package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"cozystack.io/sdk/localcp"
)

// buildCLI compiles this command into the test's temporary directory.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cozystack-local")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func run(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out, err := cmd.CombinedOutput()
	t.Logf("$ cozystack-local %s\n%s", strings.Join(args, " "), out)
	return string(out), err
}

// up, status, a second up, env and down through the real CLI, as `make demo`
// and `make down` use it; down must leave no process behind.
func TestUpStatusDownLeavesNoProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	bin := buildCLI(t)
	dir := t.TempDir()
	t.Cleanup(func() { _ = localcp.Down(dir, os.Stderr) })

	if _, err := run(t, bin, "up", "--dir", dir, "--ports=auto"); err != nil {
		t.Fatalf("up: %v", err)
	}
	out, err := run(t, bin, "status", "--dir", dir, "-o", "json")
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	var rows []localcp.ComponentStatus
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("status -o json: %v", err)
	}
	if len(rows) != 5 {
		t.Fatalf("status lists %d components, want 5", len(rows))
	}
	for _, r := range rows {
		if !r.Healthy {
			t.Errorf("%s is not healthy: %s", r.Name, r.Message)
		}
	}
	out, err = run(t, bin, "up", "--dir", dir, "--ports=auto")
	if err != nil || !strings.Contains(out, "already up") {
		t.Errorf("a second up should reuse the running control plane: %v", err)
	}
	out, err = run(t, bin, "env", "--dir", dir)
	if err != nil || !strings.Contains(out, "export KUBECONFIG="+filepath.Join(dir, "kubeconfig")) {
		t.Errorf("env: %v", err)
	}
	if _, err := run(t, bin, "down", "--dir", dir); err != nil {
		t.Fatalf("down: %v", err)
	}
	if procs, err := localcp.ProcessesReferencing(dir); err != nil || len(procs) > 0 {
		t.Fatalf("processes left after down (%v):\n%s", err, strings.Join(procs, "\n"))
	}
	out, err = run(t, bin, "status", "--dir", dir)
	if err == nil || strings.Contains(out, "COMPONENT") {
		t.Errorf("status after down should fail without a table, got:\n%s", out)
	}
	if out, err = run(t, bin, "env", "--dir", dir); err == nil || !strings.Contains(out, "not running") {
		t.Errorf("env after down should say the control plane is not running, got:\n%s", out)
	}
}

func TestUpRejectsUnknownPorts(t *testing.T) {
	root := newRoot()
	root.SetArgs([]string{"up", "--ports=sometimes", "--dir", t.TempDir()})
	root.SetOut(new(strings.Builder))
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "use fixed") {
		t.Fatalf("want a --ports error naming the choices, got %v", err)
	}
}
