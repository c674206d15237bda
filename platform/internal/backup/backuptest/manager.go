package backuptest

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/platform/internal/controllermanager"
)

// StartManager runs a controller-runtime manager of the test's own on cfg
// (the platform's scheme, no metrics or health endpoints, controller names
// not checked for uniqueness, then each of opts applied), with the
// reconcilers setup adds, until stop or the end of the test. Stopping
// waits up to 30 s for the manager to end; an error it ends with fails the
// test.
func StartManager(t testing.TB, cfg *rest.Config, setup func(ctrl.Manager) error, opts ...func(*ctrl.Options)) (stop func()) {
	t.Helper()
	o := ctrl.Options{
		Scheme:                 controllermanager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	}
	for _, f := range opts {
		f(&o)
	}
	mgr, err := ctrl.NewManager(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := setup(mgr); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager stopped with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop within 30s")
		}
	})
	t.Cleanup(stop)
	return stop
}

// FakeClock starts at the real time, so the API server's timestamps
// (creationTimestamp) and the clock agree until a test steps it.
func FakeClock() *clocktesting.FakeClock { return clocktesting.NewFakeClock(time.Now()) }
