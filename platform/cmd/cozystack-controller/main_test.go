package main

import (
	"strings"
	"testing"
)

// Our flags and klog's share one flag set: a duplicate would panic here.
func TestFlags(t *testing.T) {
	cmd := newCommand()
	args := []string{"--kubeconfig=/x", "--leader-elect=false", "--metrics-bind-address=127.0.0.1:9", "--health-probe-bind-address=0",
		"--install-crds", "--legacy-secret=write", "--concurrency=4", "-v=2"}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kubeconfig", "leader-elect", "leader-election-namespace", "metrics-bind-address",
		"health-probe-bind-address", "install-crds", "legacy-secret", "concurrency", "kube-api-qps", "v"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("flag --%s missing", name)
		}
	}
	if got := cmd.Flags().Lookup("legacy-secret").Value.String(); got != "write" {
		t.Errorf("--legacy-secret = %q, want write", got)
	}
}

// The defaults keep every endpoint on loopback and leader election on.
func TestDefaults(t *testing.T) {
	cmd := newCommand()
	for name, want := range map[string]string{
		"leader-elect": "true", "leader-election-namespace": "cozy-system",
		"metrics-bind-address": "127.0.0.1:8080", "health-probe-bind-address": "127.0.0.1:8081", "legacy-secret": "off",
	} {
		if got := cmd.Flags().Lookup(name).DefValue; got != want {
			t.Errorf("--%s defaults to %q, want %q", name, got, want)
		}
	}
}

func TestLegacySecretRejectsUnknown(t *testing.T) {
	err := newCommand().ParseFlags([]string{"--legacy-secret=read"})
	if err == nil || !strings.Contains(err.Error(), "write") {
		t.Errorf("--legacy-secret=read: err = %v, want one naming the choices", err)
	}
}

// --controllers takes names of controller.Controllers only, and defaults to
// all of them.
func TestControllersFlag(t *testing.T) {
	if got := newCommand().Flags().Lookup("controllers").DefValue; got != "clustervalues,tenantrbac,backup-core,backup-job-driver,tenantquota" {
		t.Errorf("--controllers defaults to %q", got)
	}
	for _, tc := range []struct {
		value, err string
	}{
		{"backup-core,backup-job-driver", ""},
		{"backup-core,backups", `unknown controller "backups"`},
		{",", "name at least one"},
	} {
		err := newCommand().ParseFlags([]string{"--controllers=" + tc.value})
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("--controllers=%s: err = %v, want %q", tc.value, err, tc.err)
		}
	}
}
