package main

import (
	"slices"
	"strings"
	"testing"

	"cozystack.io/platform/internal/version"
)

// Our flags and klog's share one flag set: a duplicate would panic here.
func TestFlags(t *testing.T) {
	cmd := newCommand()
	args := []string{"--kubeconfig=/x", "--leader-elect=false", "--artifact-bind-address=127.0.0.1:8090",
		"--artifact-url-base=http://op.cozy-system.svc:8090", "--storage-dir=/var/lib/op", "--platform-version=1.2.3",
		"--properties=network.stableVMAddress,gpu", "--install-crds", "-v=2"}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	props, err := cmd.Flags().GetStringSlice("properties")
	if err != nil || !slices.Equal(props, []string{"network.stableVMAddress", "gpu"}) {
		t.Errorf("--properties = %v (%v), want both properties", props, err)
	}
	for _, name := range []string{"kubeconfig", "leader-elect", "leader-election-namespace", "metrics-bind-address",
		"health-probe-bind-address", "artifact-bind-address", "artifact-url-base", "storage-dir", "platform-version",
		"properties", "install-crds", "kube-api-qps", "v"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("flag --%s missing", name)
		}
	}
}

// The defaults keep every endpoint on loopback, leader election on, and
// the platform version of this build.
func TestDefaults(t *testing.T) {
	cmd := newCommand()
	for name, want := range map[string]string{
		"leader-elect": "true", "leader-election-namespace": "cozy-system",
		"metrics-bind-address": "127.0.0.1:8180", "health-probe-bind-address": "127.0.0.1:8181",
		"artifact-bind-address": "127.0.0.1:0", "artifact-url-base": "", "platform-version": version.Platform,
	} {
		if got := cmd.Flags().Lookup(name).DefValue; got != want {
			t.Errorf("--%s defaults to %q, want %q", name, got, want)
		}
	}
}

func TestBadPlatformVersionFailsBeforeConnecting(t *testing.T) {
	cmd := newCommand()
	cmd.SetArgs([]string{"--platform-version=v1", "--kubeconfig=/nonexistent"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "--platform-version") {
		t.Errorf("err = %v, want one naming --platform-version", err)
	}
}

func TestUnknownPropertyFailsBeforeConnecting(t *testing.T) {
	cmd := newCommand()
	cmd.SetArgs([]string{"--properties=network.stableVMAdress", "--kubeconfig=/nonexistent"})
	err := cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), `"network.stableVMAdress" is not a K3 property`) || !strings.Contains(err.Error(), "network.stableVMAddress") {
		t.Errorf("err = %v, want one naming the unknown property and the known ones", err)
	}
}
