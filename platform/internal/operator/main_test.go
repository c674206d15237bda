package operator_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"cozystack.io/platform/internal/apiserver/apiservertest"
	"cozystack.io/platform/internal/operator"
	"cozystack.io/sdk/testenv"
)

// One control plane, with the real helm-controller and the real registry,
// for the package; the operator runs in the test process.
var env *testenv.Env

var (
	startOnce sync.Once
	startErr  error
	op        *operator.Operator
	stopOp    context.CancelFunc = func() {}
	storeDir  string
)

// testProperties are the K3 properties the operator under test advertises.
var testProperties = []string{"network.stableVMAddress"}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cozystack-operator-store-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	storeDir = dir
	code := testenv.Main(m, testenv.Options{HelmController: true, Registry: true}, &env)
	stopOp()
	os.RemoveAll(dir)
	os.Exit(code)
}

// start starts the operator once for the package (skipping under -short)
// and returns it. OPERATOR_LOG=1 shows its log.
func start(t *testing.T) *operator.Operator {
	t.Helper()
	testenv.Need(t, env)
	startOnce.Do(func() {
		if os.Getenv("OPERATOR_LOG") == "1" {
			ctrl.SetLogger(klog.NewKlogr())
		} else {
			ctrl.SetLogger(logr.Discard())
		}
		o := operator.NewOptions()
		o.LeaderElect = false
		o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
		o.StorageDir = storeDir
		o.Properties = testProperties
		o.InstallCRDs = true
		o.SkipNameValidation = true
		ctx, cancel := context.WithCancel(context.Background())
		stopOp = cancel
		op, startErr = operator.New(ctx, env.Config, o)
		if startErr != nil {
			return
		}
		go func() {
			if err := op.Manager.Start(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "operator stopped:", err)
			}
		}()
	})
	if startErr != nil {
		t.Fatalf("start the operator: %v", startErr)
	}
	// cozystack-api runs beside it, as in a cluster: it serves the
	// catalogs' kinds and keeps their definitions while applications of
	// them exist (contract K1, "Lifecycle of a kind").
	apiservertest.Start(t, env)
	return op
}
