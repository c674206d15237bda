package operator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/schemas"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/operator/artifactserver"
	"cozystack.io/platform/internal/operator/packagereconciler"
	"cozystack.io/platform/internal/operator/packagesourcereconciler"
	"cozystack.io/platform/internal/operator/requirements"
	"cozystack.io/platform/internal/operator/store"
	"cozystack.io/platform/internal/version"
)

// Options are the command-line options of cozystack-operator.
type Options struct {
	controllermanager.Options
	// ArtifactBindAddress is where the artifact server listens (port 0
	// picks a free one); ArtifactURLBase is the URL helm-controller
	// downloads charts from, default http://<the bound address>.
	ArtifactBindAddress string
	ArtifactURLBase     string
	// StorageDir is the OCI image-layout directory of pulled artifacts,
	// the cache of the served (last good) revisions.
	StorageDir string
	// PlatformVersion and Properties are what catalogs' requirements are
	// checked against (K3).
	PlatformVersion string
	Properties      []string
	// DisableWait installs and upgrades releases without waiting for their
	// workloads to become ready: for a cluster that runs no pods, such as
	// the local control plane, where a Deployment never becomes Available.
	DisableWait bool
}

// NewOptions returns the defaults: leader election on, every endpoint on
// loopback, the platform version of this build.
func NewOptions() *Options {
	dir := filepath.Join(os.TempDir(), "cozystack-operator")
	if d, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(d, "cozystack-operator")
	}
	return &Options{
		Options:             controllermanager.NewOptions("cozystack-operator.cozystack.io", "127.0.0.1:8180", "127.0.0.1:8181", 50, 100),
		ArtifactBindAddress: "127.0.0.1:0",
		StorageDir:          dir,
		PlatformVersion:     version.Get(),
	}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Options.AddFlags(fs)
	fs.StringVar(&o.ArtifactBindAddress, "artifact-bind-address", o.ArtifactBindAddress, "address the chart artifact server listens on (port 0: a free port)")
	fs.StringVar(&o.ArtifactURLBase, "artifact-url-base", o.ArtifactURLBase, "URL helm-controller downloads charts from, e.g. http://cozystack-operator.cozy-system.svc:8090 (default: http://<artifact-bind-address as bound>)")
	fs.StringVar(&o.StorageDir, "storage-dir", o.StorageDir, "OCI image-layout directory holding the pulled, verified artifacts (the last good revision of each PackageSource); charts being pulled are staged in its staging/ subdirectory")
	fs.StringVar(&o.PlatformVersion, "platform-version", o.PlatformVersion, "platform version (SemVer) catalogs' minPlatformVersion is compared with")
	fs.StringSliceVar(&o.Properties, "properties", o.Properties, "K3 properties this platform provides, comma-separated, e.g. network.stableVMAddress")
	fs.BoolVar(&o.DisableWait, "disable-wait", o.DisableWait, "install and upgrade releases without waiting for their workloads to be ready (clusters that run no pods, e.g. the local control plane)")
}

// Platform returns what catalogs are checked against, validated: a SemVer
// platform version with a contract version (schemas.Versions), and only K3
// properties that contract version defines (k3-properties.json), so a typo
// in --properties is refused at start instead of failing catalogs later.
func (o *Options) Platform() (requirements.Platform, error) {
	p := requirements.Platform{Version: o.PlatformVersion, Properties: o.Properties}
	if err := p.Validate(); err != nil {
		return p, err
	}
	contract, err := schemas.Versions.ForPlatform(o.PlatformVersion)
	if err != nil {
		return p, fmt.Errorf("--platform-version %s: %w", o.PlatformVersion, err)
	}
	known, err := schemas.K3Properties(contract.Name)
	if err != nil {
		return p, err
	}
	names := make([]string, len(known))
	for i, k := range known {
		names[i] = k.Name
	}
	for _, prop := range o.Properties {
		if !slices.Contains(names, prop) {
			return p, fmt.Errorf("--properties: %q is not a K3 property of contract %s; known: %s", prop, contract.Name, strings.Join(names, ", "))
		}
	}
	return p, nil
}

// CacheOptions limit the manager's informers to the objects the operator
// created (labelled v1alpha1.LabelManagedBy), so a cluster's other
// ConfigMaps, ServiceAccounts, RBAC and HelmReleases are never held in
// memory. The label only narrows what is cached: anyone may set it, and
// the reconcilers decide ownership by controller references (UIDs). Namespaces, PackageSources and Packages are cached whole;
// Secrets are never cached (pull Secrets are read directly).
func CacheOptions() cache.Options {
	managed := labels.SelectorFromSet(labels.Set{v1alpha1.LabelManagedBy: v1alpha1.ManagedByOperator})
	by := func() cache.ByObject { return cache.ByObject{Label: managed} }
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&helmv2.HelmRelease{}:        by(),
		&corev1.ConfigMap{}:          by(),
		&corev1.ServiceAccount{}:     by(),
		&rbacv1.Role{}:               by(),
		&rbacv1.RoleBinding{}:        by(),
		&rbacv1.ClusterRole{}:        by(),
		&rbacv1.ClusterRoleBinding{}: by(),
		&sourcev1.ExternalArtifact{}: {Label: managed, Namespaces: map[string]cache.Config{v1alpha1.SystemNamespace: {}}},
	}}
}

// Operator is a built, not yet started, cozystack-operator.
type Operator struct {
	Manager manager.Manager
	// Server is the artifact server (already listening).
	Server *artifactserver.Server
	// Store is the artifact store in StorageDir.
	Store *store.Store
}

// New builds the operator for cfg (and, with InstallCRDs, installs the
// CRDs and namespace first). The artifact server listens from here on.
func New(ctx context.Context, cfg *rest.Config, o *Options) (*Operator, error) {
	platform, err := o.Platform()
	if err != nil {
		return nil, err
	}
	if err := o.Prepare(ctx, cfg); err != nil {
		return nil, err
	}
	st, err := store.Open(o.StorageDir, artifact.PullOptions{})
	if err != nil {
		return nil, err
	}
	srv, err := artifactserver.New(o.ArtifactBindAddress, o.ArtifactURLBase, st)
	if err != nil {
		return nil, err
	}
	mgr, err := controllermanager.New(cfg, &o.Options, CacheOptions())
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(srv); err != nil {
		return nil, err
	}
	rec := mgr.GetEventRecorder("cozystack-operator")
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if err := (&packagesourcereconciler.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Store: st, Server: srv, Platform: platform, Recorder: rec,
		Discovery: disco,
	}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up the PackageSource reconciler: %w", err)
	}
	if err := (&packagereconciler.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Platform: platform, Recorder: rec, DisableWait: o.DisableWait,
	}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up the Package reconciler: %w", err)
	}
	return &Operator{Manager: mgr, Server: srv, Store: st}, nil
}

// Run builds the operator from o and runs it until ctx ends.
func Run(ctx context.Context, o *Options) error {
	// Refused before connecting: a typo in a flag is not a cluster error.
	if _, err := o.Platform(); err != nil {
		return err
	}
	cfg, err := o.RESTConfig()
	if err != nil {
		return err
	}
	op, err := New(ctx, cfg, o)
	if err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("serving chart artifacts", "address", op.Server.Addr().String())
	return op.Manager.Start(ctx)
}
