package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"cozystack.io/platform/internal/controller/clustervalues"
	"cozystack.io/platform/internal/controller/tenantrbac"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/tenantaccess"
)

// Options are the command-line options of cozystack-controller: those of
// every controller binary (controllermanager.Options) and the K2
// projection's.
type Options struct {
	controllermanager.Options
	// Projection configures the K2 clustervalues.
	Projection clustervalues.Options
}

// NewOptions returns the defaults: leader election on, endpoints on
// loopback, legacy Secret off; a change of the source is one write per
// tenant namespace, hence the higher rate limits.
func NewOptions() *Options {
	return &Options{
		Options: controllermanager.NewOptions("cozystack-controller.cozystack.io", "127.0.0.1:8080", "127.0.0.1:8081", 200, 400),
		Projection: clustervalues.Options{
			LegacySecret: clustervalues.LegacySecretOff, Concurrency: 8, StatusInterval: 500 * time.Millisecond,
		},
	}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Options.AddFlags(fs)
	fs.Var(legacyFlag{&o.Projection.LegacySecret}, "legacy-secret", "also write the legacy Secret cozystack-values into every tenant namespace: write or off (see contracts/schemas/v1alpha1/k2-migration.md)")
	fs.IntVar(&o.Projection.Concurrency, "concurrency", o.Projection.Concurrency, "tenant namespaces written in parallel")
	fs.DurationVar(&o.Projection.StatusInterval, "status-interval", o.Projection.StatusInterval, "least time between two ClusterValues status writes while a change is being projected")
}

// legacyFlag is the pflag.Value of --legacy-secret.
type legacyFlag struct{ p *clustervalues.LegacySecret }

func (f legacyFlag) String() string {
	if f.p == nil {
		return ""
	}
	return string(*f.p)
}

func (f legacyFlag) Set(s string) error {
	switch v := clustervalues.LegacySecret(s); v {
	case clustervalues.LegacySecretOff, clustervalues.LegacySecretWrite:
		*f.p = v
		return nil
	}
	return fmt.Errorf("want %q or %q", clustervalues.LegacySecretWrite, clustervalues.LegacySecretOff)
}

func (f legacyFlag) Type() string { return "write|off" }

// NewManager builds the manager for cfg with every reconciler set up, and,
// with InstallCRDs, installs the CRDs and the leader election namespace
// first. It does not start it.
func NewManager(ctx context.Context, cfg *rest.Config, o *Options) (manager.Manager, error) {
	if err := o.Prepare(ctx, cfg); err != nil {
		return nil, err
	}
	// The tenant roles and installer identities exist before any tenant
	// namespace is bound to them.
	direct, err := client.New(cfg, client.Options{Scheme: controllermanager.Scheme()})
	if err != nil {
		return nil, err
	}
	if err := tenantaccess.Apply(ctx, direct); err != nil {
		return nil, fmt.Errorf("install the tenant roles: %w", err)
	}
	caching := clustervalues.CacheOptions()
	for obj, by := range tenantrbac.CacheByObject() {
		caching.ByObject[obj] = by
	}
	// Ready (package health) once the informers have synced: before that,
	// a status computed from an empty cache would report every namespace
	// as lagging.
	mgr, err := controllermanager.New(cfg, &o.Options, caching)
	if err != nil {
		return nil, err
	}
	if err := clustervalues.Setup(mgr, o.Projection); err != nil {
		return nil, fmt.Errorf("set up the K2 projection: %w", err)
	}
	if err := tenantrbac.Setup(mgr); err != nil {
		return nil, fmt.Errorf("set up the tenant roles: %w", err)
	}
	return mgr, nil
}

// Run builds the manager from o and runs it until ctx ends.
func Run(ctx context.Context, o *Options) error {
	cfg, err := o.RESTConfig()
	if err != nil {
		return err
	}
	mgr, err := NewManager(ctx, cfg, o)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
