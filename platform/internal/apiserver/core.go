package apiserver

import (
	"fmt"
	"net/http"
	"time"

	restful "github.com/emicklei/go-restful/v3"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	genericapi "k8s.io/apiserver/pkg/endpoints"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"cozystack.io/platform/internal/registry/core"
)

// CoreAPIServiceName is the APIService of core.cozystack.io, served by the
// same server as apps.cozystack.io (RegisterLocal registers both).
const CoreAPIServiceName = "v1alpha1.core.cozystack.io"

// installCore serves core.cozystack.io/v1alpha1 (package core): a static
// group, routed like the application group (a go-restful container of its
// own behind the generic server's NonGoRestfulMux, so the generic server
// needs no OpenAPI models of it), with /apis discovery. Authentication,
// authorization and the other filters are the generic server's, around
// every path; wrap adds the per-user request limits the application group
// has (one count per user across both groups).
func installCore(generic *genericapiserver.GenericAPIServer, cfg *genericapiserver.RecommendedConfig, storage map[string]rest.Storage, wrap func(http.Handler) http.Handler) error {
	served := map[string][]string{}
	for r := range storage {
		served[r] = []string{core.GroupVersion.String()}
	}
	gv := genericapi.APIGroupVersion{
		Root:                        "/apis",
		GroupVersion:                core.GroupVersion,
		Storage:                     storage,
		AllServedVersionsByResource: served,
		Serializer:                  core.Codecs,
		ParameterCodec:              core.ParameterCodec,
		Creater:                     core.Scheme,
		Convertor:                   core.Scheme,
		UnsafeConvertor:             runtime.UnsafeObjectConvertor(core.Scheme),
		Defaulter:                   core.Scheme,
		Typer:                       core.Scheme,
		Namer:                       runtime.Namer(meta.NewAccessor()),
		EquivalentResourceRegistry:  generic.EquivalentResourceRegistry,
		Authorizer:                  cfg.Authorization.Authorizer,
		Admit:                       cfg.AdmissionControl,
		MinRequestTimeout:           time.Duration(cfg.MinRequestTimeout) * time.Second,
		MaxRequestBodyBytes:         cfg.MaxRequestBodyBytes,
		// Read-only resources: nothing is applied, no OpenAPI models needed.
		TypeConverter: managedfields.NewDeducedTypeConverter(),
	}
	container := restful.NewContainer()
	container.ServeMux = http.NewServeMux()
	container.Router(restful.CurlyRouter{})
	resources, _, err := gv.InstallREST(container)
	if err != nil {
		return fmt.Errorf("install routes of %s: %w", core.GroupVersion, err)
	}
	group := metav1.APIGroup{
		Name:             core.GroupName,
		Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: core.GroupVersion.String(), Version: core.GroupVersion.Version}},
		PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: core.GroupVersion.String(), Version: core.GroupVersion.Version},
	}
	container.Add(discovery.NewAPIGroupHandler(core.Codecs, group).WebService())
	prefix := "/apis/" + core.GroupName
	h := wrap(container)
	generic.Handler.NonGoRestfulMux.Handle(prefix, h)
	generic.Handler.NonGoRestfulMux.HandlePrefix(prefix+"/", h)
	generic.DiscoveryGroupManager.AddGroup(group)
	if generic.AggregatedDiscoveryGroupManager != nil {
		generic.AggregatedDiscoveryGroupManager.AddGroupVersion(core.GroupName, apidiscoveryv2.APIVersionDiscovery{
			Version: core.GroupVersion.Version, Resources: resources, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
		})
		generic.AggregatedDiscoveryGroupManager.SetGroupVersionPriority(metav1.GroupVersion(core.GroupVersion), 1000, 15)
	}
	return nil
}
