package apiserver_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/crds"
	"cozystack.io/platform/internal/apiserver"
	"cozystack.io/platform/internal/apiserver/kinds"
	"cozystack.io/platform/internal/registry/application"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var (
	env *testenv.Env
	// backend is an admin client knowing HelmReleases, ADs and APIServices.
	backend client.WithWatch
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

// startServer runs cozystack-api in-process against the test control plane
// and registers it through the aggregation layer, as `make demo` does. It
// returns once the APIService is Available.
func startServer(t *testing.T) {
	t.Helper()
	testenv.Need(t, env)
	if backend != nil {
		return
	}
	ctx := context.Background()
	crd, err := crds.ApplicationDefinition()
	if err != nil {
		t.Fatal(err)
	}
	if err := localcp.ApplyCRDs(ctx, env.Config, crd); err != nil {
		t.Fatal(err)
	}
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: apiserver.BackendScheme()})
	if err != nil {
		t.Fatal(err)
	}

	// Not t.TempDir: the server outlives this test.
	dir, err := os.MkdirTemp("", "cozystack-api-")
	if err != nil {
		t.Fatal(err)
	}
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := env.PKI().IssueServing(cert, key, "cozystack-api", "cozystack-api.cozy-system.svc", "localhost"); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	o := apiserver.NewOptions()
	o.Kubeconfig = env.Kubeconfig
	o.APIService = apiserver.APIServiceName
	o.Recommended.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	o.Recommended.SecureServing.BindPort = port
	o.Recommended.SecureServing.ServerCert.CertKey.CertFile = cert
	o.Recommended.SecureServing.ServerCert.CertKey.KeyFile = key
	srv, err := apiserver.New(o, func(k *kinds.Kind, b application.Backend) rest.Storage {
		return application.NewREST(k, b)
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(runCtx) }()
	// The server outlives the test that started it: later tests share it.
	// It stops with the test binary.
	_ = cancel

	ca, err := os.ReadFile(env.PKI().CACert())
	if err != nil {
		t.Fatal(err)
	}
	if err := apiserver.RegisterLocal(ctx, c, apiserver.Registration{Namespace: "cozy-system", Service: "cozystack-api", Port: port, CABundle: ca}); err != nil {
		t.Fatal(err)
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, fmt.Errorf("server exited: %v", err)
		default:
		}
		ok, msg, err := apiserver.APIServiceAvailable(ctx, c)
		last = msg
		return ok && err == nil, nil
	})
	if err != nil {
		t.Fatalf("APIService never Available (last: %s): %v", last, err)
	}
	backend = c
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := localcp.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
