package apiserver_test

import (
	"os"
	"testing"

	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"cozystack.io/platform/internal/apiserver/apiservertest"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var (
	env *testenv.Env
	// backend is an admin client knowing HelmReleases, ADs and APIServices.
	backend client.WithWatch
)

func TestMain(m *testing.M) {
	// controller-runtime's clients log through klog, as the server does;
	// unset, it prints a stack trace after 30 s.
	ctrllog.SetLogger(klog.NewKlogr())
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

// startServer runs cozystack-api in-process against the test control plane
// (apiservertest.Start) and sets backend.
func startServer(t *testing.T) {
	t.Helper()
	backend = apiservertest.Start(t, env)
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := localcp.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
