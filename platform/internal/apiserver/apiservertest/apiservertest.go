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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
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
	// The backup core runs with the admin's credentials here (as in the
	// local control plane): it may set restore-only fields.
	o.RestoreIdentities = []string{localcp.AdminIdentity.User}
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

// WatchEnds fails tb unless watch w ends within 2 s of since, cleanly:
// its stream closes, any ERROR event on the way being 410 Gone (contract
// K1, "Lifecycle of a kind"). what names the watch in messages; the time
// it took is logged.
func WatchEnds(tb testing.TB, w watch.Interface, since time.Time, what string) {
	tb.Helper()
	deadline := time.After(time.Until(since.Add(2 * time.Second)))
	for {
		select {
		case ev, open := <-w.ResultChan():
			if !open {
				tb.Logf("%s ended %s after", what, time.Since(since).Round(time.Millisecond))
				return
			}
			if ev.Type == watch.Error {
				if st, _ := ev.Object.(*metav1.Status); st == nil || st.Code != 410 {
					tb.Errorf("%s: ERROR event %v, want 410 Gone", what, ev.Object)
				}
			}
		case <-deadline:
			tb.Fatalf("%s is still open 2 s after", what)
		}
	}
}
