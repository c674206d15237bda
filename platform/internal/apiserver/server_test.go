package apiserver_test

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

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
