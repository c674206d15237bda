package velerodriver

import (
	"context"
	"fmt"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// StrategyKind is the strategy kind this driver serves.
const StrategyKind = "Velero"

// DefaultName is the BackupDriver name of the driver.
const DefaultName = "velero"

// DefaultVeleroNamespace is where Velero runs unless told otherwise.
const DefaultVeleroNamespace = "velero"

// Capabilities the driver declares (contract k7, "Binding").
var Capabilities = []v1alpha1.Capability{
	v1alpha1.CapabilityReclaim, v1alpha1.CapabilityRestoreToNew, v1alpha1.CapabilityVerify,
}

// Options configure the driver on top of driver.Options.
type Options struct {
	// Driver is the SDK's options; Name defaults to DefaultName,
	// StrategyKinds to [StrategyKind], Capabilities to Capabilities.
	Driver driver.Options
	// VeleroNamespace is the namespace Velero runs in, where every
	// Velero Backup, Restore and DeleteBackupRequest is created; default
	// DefaultVeleroNamespace.
	VeleroNamespace string
	// VerifyInterval is the period of the check of every Backup's Velero
	// backup (Verifier); default 5m.
	VerifyInterval time.Duration
}

func (o *Options) defaults() error {
	if o.Driver.Name == "" {
		o.Driver.Name = DefaultName
	}
	if len(o.Driver.StrategyKinds) == 0 {
		o.Driver.StrategyKinds = []string{StrategyKind}
	}
	if o.Driver.Capabilities == nil {
		o.Driver.Capabilities = Capabilities
	}
	if o.VeleroNamespace == "" {
		o.VeleroNamespace = DefaultVeleroNamespace
	}
	if errs := validation.IsDNS1123Label(o.VeleroNamespace); len(errs) > 0 {
		return fmt.Errorf("velero namespace %q: %v", o.VeleroNamespace, errs)
	}
	if o.VerifyInterval <= 0 {
		o.VerifyInterval = 5 * time.Minute
	}
	return nil
}

// Driver is the Velero driver: a driver.Driver and driver.Reclaimer.
type Driver struct {
	name      string
	namespace string
	verifier  *Verifier
	// now is the clock (tests).
	now func() time.Time
}

var (
	_ driver.Driver    = (*Driver)(nil)
	_ driver.Reclaimer = (*Driver)(nil)
)

// Scheme returns driver.Scheme() with velero.io/v1 added.
func Scheme() *runtime.Scheme {
	s := driver.Scheme()
	if err := velerov1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// New returns the driver for o (defaults applied) and the driver.Options
// to run it with. cfg is the driver's API server; the Verifier reads and
// writes through a client of its own on it. Errors: invalid Options.
func New(cfg *rest.Config, o Options) (*Driver, driver.Options, error) {
	if err := o.defaults(); err != nil {
		return nil, driver.Options{}, err
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, driver.Options{}, err
	}
	d := &Driver{name: o.Driver.Name, namespace: o.VeleroNamespace, now: time.Now}
	d.verifier = &Verifier{client: c, driver: o.Driver.Name, interval: o.VerifyInterval, kick: make(chan struct{}, 1)}
	return d, o.Driver, nil
}

// Verifier returns the driver's Verifier (capability Verify).
func (d *Driver) Verifier() *Verifier { return d.verifier }

// Setup adds one replica of the driver to mgr (driver.Setup) and its
// Verifier as a runnable. Errors: invalid Options, driver.Setup's.
func Setup(mgr manager.Manager, o Options) error {
	d, do, err := New(mgr.GetConfig(), o)
	if err != nil {
		return err
	}
	if err := velerov1.AddToScheme(mgr.GetScheme()); err != nil {
		return err
	}
	if err := driver.Setup(mgr, d, do); err != nil {
		return err
	}
	return mgr.Add(d.verifier)
}

// Start runs one replica standalone until ctx ends: driver.Start (a
// manager of the SDK's own, scheme Scheme()) and, beside it, the Verifier.
// It returns when both ended; the first error wins.
func Start(ctx context.Context, cfg *rest.Config, o Options) error {
	d, do, err := New(cfg, o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- driver.Start(ctx, cfg, Scheme(), d, do) }()
	go func() { errs <- d.verifier.Start(ctx) }()
	first := <-errs
	cancel()
	second := <-errs
	if first != nil {
		return first
	}
	return second
}
