package jobdriver

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// DefaultName is the BackupDriver name of the Job driver.
const DefaultName = "job"

// Options configure the Job driver.
type Options struct {
	// Name of its BackupDriver; default DefaultName.
	Name string
	// Namespace it runs in (its Lease; never a source of parameters.secrets).
	// Required.
	Namespace string
	// Version of the platform, shown in the registration.
	Version string
	// Identity, ClaimDuration, LeaseDuration, WrapClient and
	// SkipNameValidation are driver.Options' (defaults there).
	Identity                     string
	ClaimDuration, LeaseDuration time.Duration
	WrapClient                   func(client.Client) client.Client
	SkipNameValidation           bool
}

// DriverOptions returns the driver.Options of the Job driver: strategy
// kind Job, capabilities Reclaim and RestoreToNew, watching batch/v1 Jobs.
func DriverOptions(o Options) driver.Options {
	if o.Name == "" {
		o.Name = DefaultName
	}
	return driver.Options{
		Name: o.Name, Namespace: o.Namespace, StrategyKinds: []string{StrategyKind},
		Capabilities: []v1alpha1.Capability{v1alpha1.CapabilityReclaim, v1alpha1.CapabilityRestoreToNew},
		Version:      o.Version, Identity: o.Identity, ClaimDuration: o.ClaimDuration, LeaseDuration: o.LeaseDuration,
		Watches: []client.Object{&batchv1.Job{}}, WrapClient: o.WrapClient, SkipNameValidation: o.SkipNameValidation,
	}
}

// Setup adds the Job driver to mgr (e.g. cozystack-controller's); it adds
// batch/v1 and backups.cozystack.io to mgr's scheme. Errors are
// driver.Setup's.
func Setup(mgr manager.Manager, o Options) error {
	if err := batchv1.AddToScheme(mgr.GetScheme()); err != nil {
		return err
	}
	return driver.Setup(mgr, jobDriver{}, DriverOptions(o))
}

// Run runs the Job driver standalone on cfg until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:                 driver.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	if err := Setup(mgr, o); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
