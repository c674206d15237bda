package backuptest

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/install"
	"cozystack.io/sdk/testenv"
)

// CallTimeout bounds the context Context returns.
const CallTimeout = 2 * time.Minute

// Main is the TestMain of a package whose tests run reconcilers in-process:
// controller-runtime logs through klog, and one control plane (testenv)
// serves all the package's tests, stored in *env:
//
//	var env *testenv.Env
//	func TestMain(m *testing.M) { os.Exit(backuptest.Main(m, &env)) }
func Main(m *testing.M, env **testenv.Env) int {
	ctrl.SetLogger(klog.NewKlogr())
	return testenv.Main(m, testenv.Options{}, env)
}

var (
	clientOnce sync.Once
	clientErr  error
	adminC     client.Client
)

// Client skips t under -short (testenv.Need), installs the platform's CRDs
// on env once per test binary (with the namespace leaseNS of the drivers'
// Leases, "" for none: install.CRDs) and returns an admin client knowing
// every kind the controllers use (controllermanager.Scheme()). A test
// binary calls it with one env and one leaseNS: only the first call
// installs.
func Client(t testing.TB, env *testenv.Env, leaseNS string) client.Client {
	t.Helper()
	testenv.Need(t, env)
	clientOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
		defer cancel()
		if clientErr = install.CRDs(ctx, env.Config, leaseNS); clientErr != nil {
			return
		}
		adminC, clientErr = client.New(env.Config, client.Options{Scheme: controllermanager.Scheme()})
	})
	if clientErr != nil {
		t.Fatal(clientErr)
	}
	return adminC
}

// Context returns a context for a test's API calls, cancelled at the end
// of the test or after CallTimeout.
func Context(t testing.TB) context.Context { return ContextTimeout(t, CallTimeout) }

// ContextTimeout is Context with the bound timeout.
func ContextTimeout(t testing.TB, timeout time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}
