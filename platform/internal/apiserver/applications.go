package apiserver

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	restful "github.com/emicklei/go-restful/v3"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapi "k8s.io/apiserver/pkg/endpoints"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	discoveryendpoint "k8s.io/apiserver/pkg/endpoints/discovery/aggregated"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/platform/internal/registry/application"
)

// StorageFactory builds the REST storage of one kind on the server's way
// to its HelmReleases (the Backend): application.NewREST for cozystack-api,
// a wrapper of it for a benchmark's floor (package benchfloor).
type StorageFactory func(*appkinds.Kind, application.Backend) rest.Storage

// Applications serves the dynamic group apps.cozystack.io/v1alpha1 the way
// apiextensions-apiserver serves custom resources: one HTTP handler for the
// whole group, whose routes (and version discovery) are rebuilt from the
// current kind set and swapped in atomically. Requests in flight finish on
// the routes they started on; nothing restarts, so other kinds never stop
// answering while one is added or removed.
type Applications struct {
	newStorage StorageFactory
	backend    application.Backend
	template   genericapi.APIGroupVersion
	groups     discovery.GroupManager
	aggregated discoveryendpoint.ResourceManager

	mu       sync.Mutex
	storages map[string]servedStorage // by plural
	current  atomic.Pointer[http.Handler]

	limits            RequestLimits
	requests, watches limiter
}

// servedStorage is a kind's storage and the AD version it was built from.
type servedStorage struct {
	version string // AD UID and generation
	storage rest.Storage
}

// ApplicationsConfig is what the routes need: the kinds' storage and the
// generic server's parts.
type ApplicationsConfig struct {
	// NewStorage builds a kind's storage on Backend.
	NewStorage                 StorageFactory
	Backend                    application.Backend
	Authorizer                 authorizer.Authorizer
	Admission                  admission.Interface
	EquivalentResourceRegistry runtime.EquivalentResourceRegistry
	MinRequestTimeoutSeconds   int
	MaxRequestBodyBytes        int64
	// Limits bound the work of one request and of one user; the zero
	// value means DefaultRequestLimits. MaxBodyBytes is set from
	// MaxRequestBodyBytes.
	Limits *RequestLimits
	// Groups and Aggregated are the generic server's /apis discovery.
	Groups     discovery.GroupManager
	Aggregated discoveryendpoint.ResourceManager
}

// NewApplications returns a handler serving no kinds until Update.
func NewApplications(cfg ApplicationsConfig) *Applications {
	ns := newNegotiatedSerializer()
	a := &Applications{
		newStorage: cfg.NewStorage,
		backend:    cfg.Backend,
		groups:     cfg.Groups,
		aggregated: cfg.Aggregated,
		template: genericapi.APIGroupVersion{
			Root:                       "/apis",
			GroupVersion:               GroupVersion,
			Serializer:                 ns,
			ParameterCodec:             ParameterCodec,
			Creater:                    creator{},
			Convertor:                  converter{},
			UnsafeConvertor:            converter{},
			Defaulter:                  Scheme,
			Typer:                      typer{},
			Namer:                      runtime.Namer(meta.NewAccessor()),
			EquivalentResourceRegistry: cfg.EquivalentResourceRegistry,
			Authorizer:                 cfg.Authorizer,
			Admit:                      cfg.Admission,
			MinRequestTimeout:          time.Duration(cfg.MinRequestTimeoutSeconds) * time.Second,
			MaxRequestBodyBytes:        cfg.MaxRequestBodyBytes,
			// Application schemas are JSON Schema, not OpenAPI models of
			// Go types: server-side apply tracks fields by deduction.
			TypeConverter: managedfields.NewDeducedTypeConverter(),
		},
		storages: map[string]servedStorage{},
		limits:   DefaultRequestLimits,
	}
	if cfg.Limits != nil {
		a.limits = *cfg.Limits
	}
	a.limits.MaxBodyBytes = cfg.MaxRequestBodyBytes
	if a.limits.MaxBodyBytes <= 0 {
		a.limits.MaxBodyBytes = 3 << 20 // k8s.io/apiserver's default
	}
	var empty http.Handler = http.NotFoundHandler()
	a.current.Store(&empty)
	return a
}

func (a *Applications) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*a.current.Load()).ServeHTTP(w, r)
}

// Update rebuilds the routes for set and swaps them in, and updates /apis
// discovery. A kind whose AD did not change keeps its storage.
func (a *Applications) Update(set *appkinds.Set) error {
	a.mu.Lock()
	defer a.mu.Unlock()

	storages := map[string]servedStorage{}
	byPlural := map[string]rest.Storage{}
	served := map[string][]string{}
	for _, k := range set.Served() {
		version := fmt.Sprintf("%s/%d", k.UID, k.Generation)
		s, ok := a.storages[k.Plural]
		if !ok || s.version != version {
			s = servedStorage{version: version, storage: a.newStorage(k, a.backend)}
		}
		storages[k.Plural] = s
		byPlural[k.Plural] = s.storage
		served[k.Plural] = []string{GroupVersion.String()}
	}

	gv := a.template
	gv.Storage = byPlural
	gv.AllServedVersionsByResource = served
	container := restful.NewContainer()
	container.ServeMux = http.NewServeMux()
	container.Router(restful.CurlyRouter{})
	resources, _, err := gv.InstallREST(container)
	if err != nil {
		return fmt.Errorf("install routes of %s: %w", GroupVersion, err)
	}
	group := metav1.APIGroup{
		Name:             GroupVersion.Group,
		Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: GroupVersion.String(), Version: GroupVersion.Version}},
		PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: GroupVersion.String(), Version: GroupVersion.Version},
	}
	container.Add(discovery.NewAPIGroupHandler(a.template.Serializer, group).WebService())

	h := a.limited(container)
	a.current.Store(&h)

	for plural, s := range a.storages {
		if kept, ok := storages[plural]; !ok || kept.storage != s.storage {
			s.storage.Destroy()
		}
	}
	a.storages = storages

	if a.groups != nil {
		a.groups.AddGroup(group)
	}
	if a.aggregated != nil {
		sort.Slice(resources, func(i, j int) bool { return resources[i].Resource < resources[j].Resource })
		a.aggregated.AddGroupVersion(GroupVersion.Group, apidiscoveryv2.APIVersionDiscovery{
			Version:   GroupVersion.Version,
			Resources: resources,
			Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
		})
		a.aggregated.SetGroupVersionPriority(metav1.GroupVersion(GroupVersion), 1000, 15)
	}
	klog.V(2).InfoS("serving application kinds", "count", len(byPlural))
	return nil
}
