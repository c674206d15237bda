package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	basecompatibility "k8s.io/component-base/compatibility"
	baseversion "k8s.io/component-base/version"
	"k8s.io/klog/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	netutils "k8s.io/utils/net"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/apiserver/adwatcher"
	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/platform/internal/apiserver/frontproxy"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/install"
	"cozystack.io/platform/internal/registry/application"
	"cozystack.io/platform/internal/registry/core"
	"cozystack.io/platform/internal/stackgrow"
)

// Options are the command-line options of cozystack-api.
type Options struct {
	// Recommended holds serving, delegated authentication and
	// authorization, admission and feature options. Etcd is unused: the
	// store is HelmReleases in kube-apiserver.
	Recommended *genericoptions.RecommendedOptions
	// Kubeconfig is the backend connection (ApplicationDefinitions,
	// HelmReleases, APIService); empty means the --kubeconfig flag of the
	// recommended (core API) options, and then in-cluster.
	Kubeconfig string
	// APIService, when set, is annotated with a hash of the served kinds
	// whenever they change, so kube-apiserver refreshes discovery at once
	// instead of within a minute.
	APIService string
	// RegisterLocal ("namespace/service"), when set, registers this server
	// with kube-apiserver at start through an ExternalName Service pointing
	// at localhost (RegisterLocal), with RegisterCAFile as the caBundle:
	// for a server running beside a local control plane.
	RegisterLocal  string
	RegisterCAFile string
	// BackendQPS and BackendBurst bound the server's own requests to
	// kube-apiserver. Every application request is at least one
	// HelmRelease request, so client-go's defaults (5/10) would cap the
	// whole API at five writes a second.
	BackendQPS   float32
	BackendBurst int
	// InstallCRDs applies the ApplicationDefinition CRD (embedded from
	// contracts) before serving, for a bare cluster such as the local
	// control plane; a platform install ships it instead.
	InstallCRDs bool
	// MemoryLimit is the Go runtime's soft memory limit, applied by
	// ApplyMemoryLimit (default DefaultMemoryLimit).
	MemoryLimit string
	// Limits bound the work of one request and of one user
	// (DefaultRequestLimits).
	Limits RequestLimits
	// RootChildTenants bounds the child Tenants of a namespace no Tenant
	// renders, such as tenant-root (contract K2, Tenant quotas; default
	// application.DefaultRootChildTenants). A Tenant's own namespace is
	// bounded by its spec.childTenants.
	RootChildTenants int
	// RestoreIdentities are the users that may set an application's
	// restore-only fields (contract K1, "Restore-only fields"): the
	// identity of the backup core, whose restore creates the new
	// application through this API (default
	// application.DefaultRestoreIdentity).
	RestoreIdentities []string
}

// NewOptions returns the defaults: secure port 7443 on all addresses.
func NewOptions() *Options {
	o := &Options{Recommended: genericoptions.NewRecommendedOptions("", Codecs.LegacyCodec(GroupVersion)), BackendQPS: 500, BackendBurst: 1000,
		MemoryLimit: DefaultMemoryLimit, Limits: DefaultRequestLimits, RootChildTenants: application.DefaultRootChildTenants,
		RestoreIdentities: []string{application.DefaultRestoreIdentity}}
	o.Recommended.Etcd = nil
	o.Recommended.SecureServing.BindPort = 7443
	// Every request reaches this server through kube-apiserver's
	// aggregation layer, which has already put it through API Priority and
	// Fairness; a second pass here would only add latency.
	o.Recommended.Features.EnablePriorityAndFairness = false
	return o
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Recommended.AddFlags(fs)
	fs.StringVar(&o.APIService, "apiservice", o.APIService, "APIService to annotate with a hash of the served kinds when they change (e.g. v1alpha1.apps.cozystack.io)")
	fs.StringVar(&o.RegisterLocal, "register-local", o.RegisterLocal, "namespace/service: register this server with kube-apiserver through an ExternalName Service to localhost (local control planes only)")
	fs.Float32Var(&o.BackendQPS, "backend-qps", o.BackendQPS, "queries per second to kube-apiserver for HelmReleases and ApplicationDefinitions")
	fs.IntVar(&o.BackendBurst, "backend-burst", o.BackendBurst, "burst of queries to kube-apiserver")
	fs.BoolVar(&o.InstallCRDs, "install-crds", o.InstallCRDs, "apply the ApplicationDefinition CRD at start (bare clusters, e.g. the local control plane)")
	fs.StringVar(&o.RegisterCAFile, "register-ca-file", o.RegisterCAFile, "PEM CA of the serving certificate, the APIService caBundle (with --register-local)")
	fs.IntVar(&o.Limits.MaxDepth, "max-request-depth", o.Limits.MaxDepth, "deepest nesting of objects and arrays a request body may have; deeper bodies are refused with 400 before they are decoded")
	fs.IntVar(&o.Limits.PerUser, "max-requests-per-user", o.Limits.PerUser, "requests (other than watches) one user may have in flight; more get 429 Too Many Requests (0: no limit)")
	fs.IntVar(&o.Limits.WatchesPerUser, "max-watches-per-user", o.Limits.WatchesPerUser, "watches one user may have open; more get 429 Too Many Requests (0: no limit)")
	fs.IntVar(&o.RootChildTenants, "root-child-tenants", o.RootChildTenants, "child Tenants a namespace that no Tenant renders (tenant-root) may hold; a Tenant's own namespace holds at most its spec.childTenants (contract K2, Tenant quotas)")
	fs.StringSliceVar(&o.RestoreIdentities, "restore-identity", o.RestoreIdentities, "user name of the backup core (cozystack-controller), the only identity that may set or change an application's restore-only fields (x-cozystack-restore-only, e.g. Postgres bootstrap.recovery); repeat or comma-separate for several")
	fs.StringVar(&o.MemoryLimit, "memory-limit", o.MemoryLimit, "soft limit of the Go runtime's memory (a quantity, e.g. 100Mi; 0 for none), so that the heap left behind by a large list is returned to the system; the GOMEMLIMIT environment variable, when set, wins")
}

// BackendKubeconfig is the kubeconfig file of the backend connection:
// Kubeconfig, or else the recommended options' --kubeconfig; empty means
// in-cluster.
func (o *Options) BackendKubeconfig() string {
	if o.Kubeconfig == "" && o.Recommended.CoreAPI != nil {
		return o.Recommended.CoreAPI.CoreAPIKubeconfigPath
	}
	return o.Kubeconfig
}

// Server is a configured cozystack-api.
type Server struct {
	Generic         *genericapiserver.GenericAPIServer
	Applications    *Applications
	watcher         *adwatcher.Watcher
	cache           cache.Cache
	releases        *application.ReleaseCache
	settings        *application.SettingsSync
	sharedInformers informers.SharedInformerFactory
}

// New builds the server; newStorage builds the storage of each kind it
// serves (StorageFactory).
func New(o *Options, newStorage StorageFactory) (*Server, error) {
	o.Kubeconfig = o.BackendKubeconfig()
	backend, err := backendConfig(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	backend.QPS, backend.Burst = o.BackendQPS, o.BackendBurst
	withoutTimeoutRetries(backend)
	// Lists of thousands of HelmReleases would otherwise be gzipped by
	// kube-apiserver and gunzipped here, costing both sides CPU to save
	// bandwidth the backend connection does not need.
	backend.DisableCompression = true
	if o.Recommended.CoreAPI != nil && o.Recommended.CoreAPI.CoreAPIKubeconfigPath == "" {
		o.Recommended.CoreAPI.CoreAPIKubeconfigPath = o.Kubeconfig
	}
	if o.Recommended.Authentication.RemoteKubeConfigFile == "" {
		o.Recommended.Authentication.RemoteKubeConfigFile = o.Kubeconfig
	}
	if o.Recommended.Authorization.RemoteKubeConfigFile == "" {
		o.Recommended.Authorization.RemoteKubeConfigFile = o.Kubeconfig
	}
	if err := o.Recommended.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("self-signed serving certificate: %w", err)
	}
	cfg := genericapiserver.NewRecommendedConfig(Codecs)
	cfg.FeatureGate = utilfeature.DefaultFeatureGate
	cfg.EffectiveVersion = basecompatibility.NewEffectiveVersionFromString(baseversion.DefaultKubeBinaryVersion, "", "")
	if err := o.Recommended.ApplyTo(cfg); err != nil {
		return nil, err
	}
	if authn := cfg.Authentication.Authenticator; authn != nil {
		// Requests from the aggregation layer are authenticated with the
		// front-proxy certificate verified once per chain (package
		// frontproxy); anything else, and every error, is left to the
		// authenticator the options built.
		if rh := cfg.Authentication.RequestHeaderConfig; rh != nil {
			authn = union.New(group.NewAuthenticatedGroupAdder(frontproxy.New(rh)), authn)
		}
		cfg.Authentication.Authenticator = stackgrow.Authenticator{Request: authn}
	}
	generic, err := cfg.Complete().New("cozystack-api", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}

	if o.InstallCRDs {
		if err := install.CRDs(context.Background(), backend, ""); err != nil {
			return nil, err
		}
	}
	scheme := controllermanager.Scheme()
	c, err := client.NewWithWatch(backend, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	adCache, err := cache.New(backend, cache.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	releases := application.NewReleaseCache(c)
	lister, err := application.NewReleaseLister(backend)
	if err != nil {
		return nil, err
	}
	storageBackend := application.Backend{Client: c, Lister: lister, Releases: releases, Authorizer: cfg.Authorization.Authorizer,
		RootChildTenants: o.RootChildTenants, RestoreIdentities: o.RestoreIdentities}
	if cfg.SharedInformerFactory != nil {
		// The same namespace informer NamespaceLifecycle admission uses.
		storageBackend.Namespaces = cfg.SharedInformerFactory.Core().V1().Namespaces().Lister()
	}

	apps := NewApplications(ApplicationsConfig{
		NewStorage:                 newStorage,
		Backend:                    storageBackend,
		Authorizer:                 cfg.Authorization.Authorizer,
		Admission:                  cfg.AdmissionControl,
		EquivalentResourceRegistry: generic.EquivalentResourceRegistry,
		MinRequestTimeoutSeconds:   cfg.MinRequestTimeout,
		MaxRequestBodyBytes:        cfg.MaxRequestBodyBytes,
		Limits:                     &o.Limits,
		Groups:                     generic.DiscoveryGroupManager,
		Aggregated:                 generic.AggregatedDiscoveryGroupManager,
	})
	openapi := NewOpenAPI(generic.Handler.NonGoRestfulMux)
	prefix := "/apis/" + GroupVersion.Group
	generic.Handler.NonGoRestfulMux.Handle(prefix, apps)
	generic.Handler.NonGoRestfulMux.HandlePrefix(prefix+"/", apps)

	s := &Server{Generic: generic, Applications: apps, cache: adCache, releases: releases, sharedInformers: cfg.SharedInformerFactory}
	secrets, err := kubernetes.NewForConfig(backend)
	if err != nil {
		return nil, err
	}
	if err := installCore(generic, cfg, map[string]rest.Storage{
		core.TenantSecretsResource: &core.TenantSecrets{Secrets: secrets, Releases: c, Kinds: func() *appkinds.Set { return s.watcher.Current() }},
	}, apps.limited); err != nil {
		return nil, err
	}
	if o.RegisterLocal != "" {
		reg, err := localRegistration(o)
		if err != nil {
			return nil, err
		}
		generic.AddPostStartHookOrDie("register-apiservice", func(hctx genericapiserver.PostStartHookContext) error {
			return RegisterLocal(hctx, c, reg)
		})
	}
	s.settings = &application.SettingsSync{Client: c}
	s.watcher = &adwatcher.Watcher{Cache: adCache, Client: c, Applications: releases, OnChange: func(set *appkinds.Set) {
		if err := apps.Update(set); err != nil {
			klog.ErrorS(err, "updating the served application kinds")
			return
		}
		// A changed kind's release settings reach its existing
		// applications (contract K1, "Release settings").
		s.settings.Update(set)
		if err := openapi.Update(set); err != nil {
			klog.ErrorS(err, "updating the OpenAPI documents of the application kinds")
		}
		if o.APIService != "" {
			if err := touchAPIService(context.Background(), c, o.APIService, set.Fingerprint()); err != nil {
				klog.ErrorS(err, "annotating the APIService; discovery refreshes within a minute instead", "apiservice", o.APIService)
			}
		}
	}}
	// Not ready until the first set of kinds is served: a restarted server
	// never answers 404 for a kind that exists.
	if err := generic.AddReadyzChecks(healthz.NamedCheck("application-kinds", func(*http.Request) error {
		if s.watcher.Current() == nil {
			return fmt.Errorf("ApplicationDefinitions not resolved yet")
		}
		return nil
	})); err != nil {
		return nil, err
	}
	return s, nil
}

// Run serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	s.Generic.AddPostStartHookOrDie("application-definitions", func(hctx genericapiserver.PostStartHookContext) error {
		if s.sharedInformers != nil {
			s.sharedInformers.Start(hctx.Done())
		}
		go s.releases.Run(hctx)
		go s.settings.Run(hctx)
		go func() {
			if err := s.cache.Start(hctx); err != nil {
				klog.ErrorS(err, "ApplicationDefinition cache stopped")
			}
		}()
		go func() {
			if err := s.watcher.Run(hctx); err != nil {
				klog.ErrorS(err, "ApplicationDefinition watcher stopped")
			}
		}()
		return nil
	})
	return s.Generic.PrepareRun().RunWithContext(ctx)
}

// AnnotationKindsHash is set on the APIService to the served kinds'
// fingerprint hash: updating the APIService makes kube-aggregator refresh
// its copy of our discovery at once.
const AnnotationKindsHash = "apps.cozystack.io/kinds-hash"

func touchAPIService(ctx context.Context, c client.Client, name, fingerprint string) error {
	sum := sha256.Sum256([]byte(fingerprint))
	hash := hex.EncodeToString(sum[:8])
	svc := &apiregistrationv1.APIService{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, svc); err != nil {
		return err
	}
	if svc.Annotations[AnnotationKindsHash] == hash {
		return nil
	}
	patch := client.MergeFrom(svc.DeepCopy())
	if svc.Annotations == nil {
		svc.Annotations = map[string]string{}
	}
	svc.Annotations[AnnotationKindsHash] = hash
	return c.Patch(ctx, svc, patch)
}

func localRegistration(o *Options) (Registration, error) {
	ns, svc, ok := strings.Cut(o.RegisterLocal, "/")
	if !ok || ns == "" || svc == "" {
		return Registration{}, fmt.Errorf("--register-local=%q: want namespace/service", o.RegisterLocal)
	}
	ca, err := os.ReadFile(o.RegisterCAFile)
	if err != nil {
		return Registration{}, fmt.Errorf("--register-ca-file: %w", err)
	}
	return Registration{Namespace: ns, Service: svc, Port: o.Recommended.SecureServing.BindPort, CABundle: ca}, nil
}

func backendConfig(kubeconfig string) (*restclient.Config, error) {
	if kubeconfig == "" {
		return restclient.InClusterConfig()
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}
