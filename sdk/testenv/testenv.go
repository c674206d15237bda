package testenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/localcp"
)

// Options choose the optional components.
type Options struct {
	HelmController bool
	Registry       bool
}

// Env is a running control plane with ready clients.
type Env struct {
	*localcp.ControlPlane
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// Client is a controller-runtime client knowing core and Flux kinds.
	Client client.Client
	// Clientset is a typed client-go clientset.
	Clientset kubernetes.Interface

	tmpDir string
}

// New starts a control plane in a fresh temporary directory.
func New(ctx context.Context, opts Options) (*Env, error) {
	dir, err := os.MkdirTemp("", "cozystack-testenv-")
	if err != nil {
		return nil, err
	}
	cp, err := localcp.Start(ctx, localcp.Options{
		Layout:         localcp.DefaultLayout(),
		Dir:            dir,
		HelmController: opts.HelmController,
		Registry:       opts.Registry,
		Out:            os.Stderr,
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	env := &Env{ControlPlane: cp, tmpDir: dir}
	if env.Config, err = cp.RESTConfig(); err != nil {
		env.Stop()
		return nil, err
	}
	env.Config.QPS, env.Config.Burst = 200, 400
	if env.Client, err = client.New(env.Config, client.Options{Scheme: localcp.Scheme()}); err != nil {
		env.Stop()
		return nil, err
	}
	if env.Clientset, err = kubernetes.NewForConfig(env.Config); err != nil {
		env.Stop()
		return nil, err
	}
	return env, nil
}

// Stop stops every process and removes the temporary directory (kept, with
// its logs, when KEEP_TESTENV=1).
func (e *Env) Stop() error {
	err := e.ControlPlane.Stop()
	if os.Getenv("KEEP_TESTENV") == "1" {
		fmt.Fprintf(os.Stderr, "testenv: kept %s\n", e.tmpDir)
		return err
	}
	if rmErr := os.RemoveAll(e.tmpDir); err == nil {
		err = rmErr
	}
	return err
}

// Need skips the test under -short, where Main starts no control plane.
func Need(tb testing.TB, env *Env) {
	tb.Helper()
	if env == nil {
		tb.Skip("needs the local control plane; not started under -short")
	}
}

// Start starts a control plane for one test and stops it at cleanup.
func Start(tb testing.TB, opts Options) *Env {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs the local control plane; skipped under -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := New(ctx, opts)
	if err != nil {
		tb.Fatalf("start local control plane: %v", err)
	}
	tb.Cleanup(func() {
		if err := env.Stop(); err != nil {
			tb.Errorf("stop local control plane: %v", err)
		}
	})
	return env
}

// Main runs m with one control plane shared by the package's tests, stored in
// *env, and returns the exit code for os.Exit. Under `go test -short` no
// control plane starts and *env stays nil: tests call Need to skip.
func Main(m *testing.M, opts Options, env **Env) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	e, err := New(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: start local control plane: %v\n", err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: stop local control plane: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
