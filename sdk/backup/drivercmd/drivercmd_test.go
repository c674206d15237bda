package drivercmd_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"cozystack.io/sdk/backup/drivercmd"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

// The exit codes and messages of a driver's binary, without a cluster:
// Run's function stands in for the driver.
func TestRun(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("POD_NAMESPACE", "")
	t.Setenv("KUBECONFIG", "")
	var got drivercmd.Flags
	var extra string
	spec := func(run func(ctx context.Context) error) drivercmd.Spec {
		return drivercmd.Spec{
			Use: "demo-backup-driver", Short: "demo", DefaultName: "demo", Version: "1.2.3",
			AddFlags: func(fs *pflag.FlagSet) { fs.StringVar(&extra, "bucket", "", "a driver flag") },
			Validate: func() error {
				if extra == "bad" {
					return errors.New("--bucket bad")
				}
				return nil
			},
			Run: func(ctx context.Context, _ *rest.Config, f drivercmd.Flags) error { got = f; return run(ctx) },
		}
	}
	ok := func(context.Context) error { return nil }
	canceled := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	base := []string{"--kubeconfig", kc, "--namespace", "cozy-demo"}
	for _, tc := range []struct {
		name string
		args []string
		run  func(context.Context) error
		code int
		says string
	}{
		{"runs", append(base, "--bucket", "b", "--identity", "pod-0"), ok, drivercmd.ExitOK, ""},
		{"stopped by a signal", base, canceled, drivercmd.ExitOK, ""},
		{"the driver fails", base, func(context.Context) error { return errors.New("boom") }, drivercmd.ExitError, "demo-backup-driver: boom"},
		{"unknown flag", append(base, "--nope"), ok, drivercmd.ExitUsage, "unknown flag: --nope"},
		{"an argument", append(base, "extra"), ok, drivercmd.ExitUsage, "unexpected arguments"},
		{"no namespace", []string{"--kubeconfig", kc}, ok, drivercmd.ExitUsage, "--namespace is required"},
		{"bad name", append(base, "--name", "Bad_Name"), ok, drivercmd.ExitUsage, `--name "Bad_Name"`},
		{"claim too long", append(base, "--claim-duration", "2h"), ok, drivercmd.ExitUsage, "at most 1h"},
		{"driver flag refused", append(base, "--bucket", "bad"), ok, drivercmd.ExitUsage, "--bucket bad"},
		{"no cluster configuration", []string{"--namespace", "x"}, ok, drivercmd.ExitError, "kubeconfig:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra = ""
			// A signal cancels Main's context (signal.NotifyContext).
			ctx, cancel := context.WithCancel(context.Background())
			defer time.AfterFunc(100*time.Millisecond, cancel).Stop()
			var out bytes.Buffer
			if code := drivercmd.Run(ctx, spec(tc.run), tc.args, &out); code != tc.code || !strings.Contains(out.String(), tc.says) {
				t.Errorf("exit %d, output %q; want %d and %q", code, out.String(), tc.code, tc.says)
			}
		})
	}
	if got.Name != "demo" || got.Namespace != "cozy-demo" || got.Version != "1.2.3" || got.LeaseDuration != 30*time.Second || got.ClaimDuration != time.Minute {
		t.Errorf("flags %+v", got)
	}
}

// --health-probe-bind-address: /healthz answers while the driver runs,
// /readyz while the API server answers /version, and the port is free
// again once the driver stopped.
func TestProbes(t *testing.T) {
	up := true
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up || r.URL.Path != "/version" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"major":"1","minor":"34","gitVersion":"v1.34.0"}`))
	}))
	defer api.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(strings.Replace(kubeconfig, "https://127.0.0.1:1", api.URL, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	get := func(path string) int {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var codes []int
	spec := drivercmd.Spec{Use: "demo-backup-driver", DefaultName: "demo", Run: func(ctx context.Context, _ *rest.Config, _ drivercmd.Flags) error {
		codes = append(codes, get("/healthz"), get("/readyz"))
		up = false
		time.Sleep(6 * time.Second) // past the cached answer
		codes = append(codes, get("/healthz"), get("/readyz"))
		return nil
	}}
	var out bytes.Buffer
	if code := drivercmd.Run(context.Background(), spec, []string{"--kubeconfig", kc, "--namespace", "x", "--health-probe-bind-address", addr}, &out); code != drivercmd.ExitOK {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if want := []int{200, 200, 200, 503}; !slices.Equal(codes, want) {
		t.Errorf("healthz, readyz while up, then while the API server is down: %v, want %v", codes, want)
	}
	// Stopped: nothing listens any more.
	deadline := time.Now().Add(2 * time.Second)
	for get("/healthz") != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if c := get("/healthz"); c != 0 {
		t.Errorf("/healthz still answers %d after the driver stopped", c)
	}
	if code := drivercmd.Run(context.Background(), spec, []string{"--kubeconfig", kc, "--namespace", "x", "--health-probe-bind-address", "256.0.0.1:1"}, &out); code != drivercmd.ExitError || !strings.Contains(out.String(), "--health-probe-bind-address 256.0.0.1:1") {
		t.Errorf("a bad address: exit %d, %q", code, out.String())
	}
}
