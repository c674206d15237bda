// Package runner builds cozystack-controller: one controller-runtime
// manager (leader election on a Lease, metrics and health endpoints on
// loopback by default) running the platform's reconcilers: the K2
// projection (package projection) and the tenant roles (package
// tenantrbac, with the cluster-wide roles of platform/tenantaccess applied
// at start). Command cozystack-controller is its
// flags and a call to Run.
package runner

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/controller/clustervalues"
	"cozystack.io/platform/internal/controller/tenantrbac"
	"cozystack.io/platform/internal/health"
	"cozystack.io/platform/internal/install"
	"cozystack.io/platform/internal/kubeconfig"
	"cozystack.io/platform/tenantaccess"
)

// Options are the command-line options of cozystack-controller.
type Options struct {
	// Kubeconfig is the kubeconfig file; empty means in-cluster (or
	// $KUBECONFIG, as controller-runtime resolves it).
	Kubeconfig string
	// LeaderElect runs the reconcilers only in the replica holding the
	// Lease LeaderElectionID in LeaderElectionNamespace.
	LeaderElect             bool
	LeaderElectionNamespace string
	LeaderElectionID        string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election
	// (client-go's leaderelection semantics); zero means controller-runtime's
	// defaults (15s, 10s, 2s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// MetricsBindAddress serves /metrics ("0" disables it).
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz ("0" disables it).
	HealthProbeBindAddress string
	// InstallCRDs applies the CRDs of cozystack.io/contracts and creates
	// LeaderElectionNamespace before starting, for a bare cluster such as
	// the local control plane; a platform install ships them instead.
	InstallCRDs bool
	// QPS and Burst bound the controller's requests to kube-apiserver: a
	// change of the source is one write per tenant namespace.
	QPS   float32
	Burst int
	// Projection configures the K2 clustervalues.
	Projection clustervalues.Options
	// SkipNameValidation allows more than one manager per process (tests
	// run several; controller names are otherwise unique per process).
	SkipNameValidation bool
}

// NewOptions returns the defaults: leader election on, endpoints on
// loopback, legacy Secret off.
func NewOptions() *Options {
	return &Options{
		LeaderElect:             true,
		LeaderElectionNamespace: "cozy-system",
		LeaderElectionID:        "cozystack-controller.cozystack.io",
		MetricsBindAddress:      "127.0.0.1:8080",
		HealthProbeBindAddress:  "127.0.0.1:8081",
		QPS:                     200,
		Burst:                   400,
		Projection: clustervalues.Options{
			LegacySecret: clustervalues.LegacySecretOff, Concurrency: 8, StatusInterval: 500 * time.Millisecond,
		},
	}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file (default: in-cluster, or $KUBECONFIG)")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "run the reconcilers only while holding the leader election Lease")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election Lease")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "name of the leader election Lease")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration, "how long a non-leader waits before taking over an unrenewed Lease (0: 15s)")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline, "how long the leader retries renewing before giving up (0: 10s)")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod, "interval between leader election attempts (0: 2s)")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of the Prometheus /metrics endpoint (\"0\" disables it)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address of /healthz and /readyz (\"0\" disables them)")
	fs.BoolVar(&o.InstallCRDs, "install-crds", o.InstallCRDs, "apply the cozystack.io CRDs and create the leader election namespace at start (bare clusters, e.g. the local control plane)")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "queries per second to kube-apiserver")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "burst of queries to kube-apiserver")
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

// Scheme knows every kind cozystack-controller reads or writes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	utilruntime.Must(helmv2.AddToScheme(s))
	return s
}

// RESTConfig loads the kubeconfig of o (kubeconfig.Load: found as
// controller-runtime does when empty) with o's QPS and burst.
func (o *Options) RESTConfig() (*rest.Config, error) {
	return kubeconfig.Load(o.Kubeconfig, o.QPS, o.Burst)
}

// NewManager builds the manager for cfg with every reconciler set up, and,
// with InstallCRDs, installs the CRDs and the leader election namespace
// first. It does not start it.
func NewManager(ctx context.Context, cfg *rest.Config, o *Options) (manager.Manager, error) {
	if o.InstallCRDs {
		if err := install.CRDs(ctx, cfg, o.LeaderElectionNamespace); err != nil {
			return nil, err
		}
	}
	// The tenant roles and installer identities exist before any tenant
	// namespace is bound to them.
	direct, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, err
	}
	if err := tenantaccess.Apply(ctx, direct); err != nil {
		return nil, fmt.Errorf("install the tenant roles: %w", err)
	}
	cacheOpts := clustervalues.CacheOptions()
	for obj, by := range tenantrbac.CacheByObject() {
		cacheOpts.ByObject[obj] = by
	}
	mo := ctrl.Options{
		Scheme:                        Scheme(),
		Cache:                         cacheOpts,
		Metrics:                       metricsserver.Options{BindAddress: o.MetricsBindAddress},
		HealthProbeBindAddress:        o.HealthProbeBindAddress,
		LeaderElection:                o.LeaderElect,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionID:              o.LeaderElectionID,
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: &o.SkipNameValidation},
	}
	if o.LeaseDuration > 0 {
		mo.LeaseDuration = &o.LeaseDuration
	}
	if o.RenewDeadline > 0 {
		mo.RenewDeadline = &o.RenewDeadline
	}
	if o.RetryPeriod > 0 {
		mo.RetryPeriod = &o.RetryPeriod
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return nil, err
	}
	if err := clustervalues.Setup(mgr, o.Projection); err != nil {
		return nil, fmt.Errorf("set up the K2 projection: %w", err)
	}
	if err := tenantrbac.Setup(mgr); err != nil {
		return nil, fmt.Errorf("set up the tenant roles: %w", err)
	}
	// Ready once the informers have synced: before that, a status computed
	// from an empty cache would report every namespace as lagging.
	if err := health.AddChecks(mgr); err != nil {
		return nil, err
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
