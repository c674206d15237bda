package apiservertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/crds"
	"cozystack.io/platform/internal/apiserver"
	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/registry/application"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var (
	mu      sync.Mutex
	started = map[*testenv.Env]client.WithWatch{}
)

// Start runs cozystack-api for env, once per env and test binary (it
// outlives the test that started it and stops with the binary), and returns
// once its APIService is Available. The client returned is an admin client
// of env knowing HelmReleases, ApplicationDefinitions and APIServices. It
// fails tb when the server does not start.
func Start(tb testing.TB, env *testenv.Env) client.WithWatch {
	tb.Helper()
	testenv.Need(tb, env)
	mu.Lock()
	defer mu.Unlock()
	if c, ok := started[env]; ok {
		return c
	}
	ctx := context.Background()
	crd, err := crds.ApplicationDefinition()
	if err != nil {
		tb.Fatal(err)
	}
	if err := localcp.ApplyCRDs(ctx, env.Config, crd); err != nil {
		tb.Fatal(err)
	}
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: controllermanager.Scheme()})
	if err != nil {
		tb.Fatal(err)
	}

	// Not tb.TempDir: the server outlives this test.
	dir, err := os.MkdirTemp("", "cozystack-api-")
	if err != nil {
		tb.Fatal(err)
	}
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := env.PKI().IssueServing(cert, key, "cozystack-api", "cozystack-api.cozy-system.svc", "localhost"); err != nil {
		tb.Fatal(err)
	}
	port, err := localcp.FreePort()
	if err != nil {
		tb.Fatal(err)
	}
	o := apiserver.NewOptions()
	o.Kubeconfig = env.Kubeconfig
	o.APIService = apiserver.APIServiceName
	o.Recommended.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	o.Recommended.SecureServing.BindPort = port
	o.Recommended.SecureServing.ServerCert.CertKey.CertFile = cert
	o.Recommended.SecureServing.ServerCert.CertKey.KeyFile = key
	srv, err := apiserver.New(o, func(k *appkinds.Kind, b application.Backend) rest.Storage {
		return application.NewREST(k, b)
	})
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background()) }()

	ca, err := os.ReadFile(env.PKI().CACert())
	if err != nil {
		tb.Fatal(err)
	}
	if err := apiserver.RegisterLocal(ctx, c, apiserver.Registration{Namespace: "cozy-system", Service: "cozystack-api", Port: port, CABundle: ca}); err != nil {
		tb.Fatal(err)
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
		tb.Fatalf("APIService never Available (last: %s): %v", last, err)
	}
	started[env] = c
	return c
}
