package controllermanager

import (
	"context"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/health"
	"cozystack.io/platform/internal/install"
	"cozystack.io/platform/internal/kubeconfig"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// Options are the command-line options every controller binary has.
type Options struct {
	// Kubeconfig is the kubeconfig file; empty means in-cluster (or
	// $KUBECONFIG, as controller-runtime resolves it).
	Kubeconfig string
	// QPS and Burst bound the binary's requests to kube-apiserver.
	QPS   float32
	Burst int
	// LeaderElect runs the reconcilers only in the replica holding the
	// Lease LeaderElectionID in LeaderElectionNamespace.
	LeaderElect             bool
	LeaderElectionNamespace string
	LeaderElectionID        string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election
	// (client-go's leaderelection semantics); zero means controller-runtime's
	// defaults (15s, 10s, 2s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// MetricsBindAddress serves /metrics and HealthProbeBindAddress
	// /healthz and /readyz ("0" disables each); loopback by default.
	MetricsBindAddress     string
	HealthProbeBindAddress string
	// InstallCRDs applies the CRDs of cozystack.io/contracts and creates
	// LeaderElectionNamespace before starting, for a bare cluster such as
	// the local control plane; a platform install ships them instead.
	InstallCRDs bool
	// SkipNameValidation allows more than one manager per process (tests
	// run several; controller names are otherwise unique per process).
	SkipNameValidation bool
}

// NewOptions returns the defaults shared by every binary: leader election
// on in v1alpha1.SystemNamespace under Lease leaseID, the endpoints on
// loopback at metrics and health.
func NewOptions(leaseID, metrics, health string, qps float32, burst int) Options {
	return Options{
		LeaderElect: true, LeaderElectionNamespace: v1alpha1.SystemNamespace, LeaderElectionID: leaseID,
		MetricsBindAddress: metrics, HealthProbeBindAddress: health, QPS: qps, Burst: burst,
	}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file (default: in-cluster, or $KUBECONFIG)")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "queries per second to kube-apiserver")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "burst of queries to kube-apiserver")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "run the reconcilers only while holding the leader election Lease")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election Lease")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "name of the leader election Lease")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration, "how long a non-leader waits before taking over an unrenewed Lease (0: 15s)")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline, "how long the leader retries renewing before giving up (0: 10s)")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod, "interval between leader election attempts (0: 2s)")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of the Prometheus /metrics endpoint (\"0\" disables it)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address of /healthz and /readyz (\"0\" disables them)")
	fs.BoolVar(&o.InstallCRDs, "install-crds", o.InstallCRDs, "apply the cozystack.io CRDs and create the leader election namespace at start (bare clusters, e.g. the local control plane)")
}

// RESTConfig loads the kubeconfig of o (kubeconfig.Load: found as
// controller-runtime does when empty) with o's QPS and burst.
func (o *Options) RESTConfig() (*rest.Config, error) {
	return kubeconfig.Load(o.Kubeconfig, o.QPS, o.Burst)
}

// Scheme knows every kind a platform binary reads or writes in
// kube-apiserver: Kubernetes' own, cozystack.io/v1alpha1, Flux's
// HelmRelease and ExternalArtifact, APIService, and backups.cozystack.io.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	utilruntime.Must(helmv2.AddToScheme(s))
	utilruntime.Must(sourcev1.AddToScheme(s))
	utilruntime.Must(apiregistrationv1.AddToScheme(s))
	utilruntime.Must(backupsv1alpha1.AddToScheme(s))
	return s
}

// Prepare readies a bare cluster when InstallCRDs asks for it: it applies
// the CRDs and creates the leader election namespace. A binary calls it
// before anything that writes to the cluster.
func (o *Options) Prepare(ctx context.Context, cfg *rest.Config) error {
	if !o.InstallCRDs {
		return nil
	}
	return install.CRDs(ctx, cfg, o.LeaderElectionNamespace)
}

// New builds, without starting it, the manager of o for cfg: Scheme, the
// informers narrowed by caching, leader election, the endpoints and the
// health checks of package health. Errors are controller-runtime's.
func New(cfg *rest.Config, o *Options, caching cache.Options) (manager.Manager, error) {
	mo := ctrl.Options{
		Scheme:                        Scheme(),
		Cache:                         caching,
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
	if err := health.AddChecks(mgr); err != nil {
		return nil, err
	}
	return mgr, nil
}
