package apiserver

import (
	"fmt"
	"net/http"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"cozystack.io/platform/internal/apiserver/appkinds"
)

// OpenAPI serves /openapi/v2 and /openapi/v3 for the application kinds,
// rebuilt from the kind set on every change, so that `kubectl explain` and
// kubectl's client-side validation know each kind's spec. The documents are
// built the way apiextensions-apiserver builds them for custom resources,
// from a CRD that describes the kind (CRDFor).
type OpenAPI struct {
	mu sync.Mutex
	v2 *handler.OpenAPIService
	v3 *handler3.OpenAPIService
}

// v3Path is the OpenAPI v3 document name of the group version.
var v3Path = "apis/" + GroupVersion.Group + "/" + GroupVersion.Version

func emptySwagger() *spec.Swagger {
	return &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger: "2.0",
		Info:    &spec.Info{InfoProps: spec.InfoProps{Title: "cozystack-api", Version: GroupVersion.Version}},
		Paths:   &spec.Paths{Paths: map[string]spec.PathItem{}},
	}}
}

func emptyV3() *spec3.OpenAPI {
	return &spec3.OpenAPI{
		Version: "3.0.0",
		Info:    &spec.Info{InfoProps: spec.InfoProps{Title: "cozystack-api", Version: GroupVersion.Version}},
		Paths:   &spec3.Paths{Paths: map[string]*spec3.Path{}},
	}
}

// NewOpenAPI registers the two endpoints on mux.
func NewOpenAPI(mux common.PathHandlerByGroupVersion) *OpenAPI {
	o := &OpenAPI{v2: handler.NewOpenAPIService(emptySwagger()), v3: handler3.NewOpenAPIService()}
	o.v2.RegisterOpenAPIVersionedService("/openapi/v2", mux)
	// Publish the group version from the start, even with no kinds:
	// kube-aggregator reads the index of documents once a minute and
	// routes only the paths it saw; the content itself is fetched from us
	// on every request.
	o.v3.UpdateGroupVersion(v3Path, emptyV3())
	mux.Handle("/openapi/v3", http.HandlerFunc(o.v3.HandleDiscovery))
	mux.HandlePrefix("/openapi/v3/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The kinds change at run time, and with them the document's hash.
		// kube-aggregator proxies requests carrying the hash it last read
		// from our discovery; handler3 would answer a stale hash with a
		// redirect, which the aggregator refuses. Serve the current
		// document instead (without the immutable caching a hash implies).
		if r.URL.Query().Has("hash") {
			r = r.Clone(r.Context())
			q := r.URL.Query()
			q.Del("hash")
			r.URL.RawQuery = q.Encode()
		}
		o.v3.HandleGroupVersion(w, r)
	}))
	return o
}

// Update rebuilds both documents for set. A kind whose schema the builder
// cannot describe is published with a free-form spec and logged; it is
// still served.
func (o *OpenAPI) Update(set *appkinds.Set) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var v2s []*spec.Swagger
	var v3s []*spec3.OpenAPI
	for _, k := range set.Served() {
		crd := CRDFor(k)
		opts := builder.Options{AllowNonStructural: true}
		s3, err := builder.BuildOpenAPIV3(crd, GroupVersion.Version, opts)
		if err != nil {
			klog.ErrorS(err, "OpenAPI v3 of an application kind; publishing a free-form spec", "kind", k.Kind)
			crd = crdWithSpec(k, freeForm())
			if s3, err = builder.BuildOpenAPIV3(crd, GroupVersion.Version, opts); err != nil {
				return fmt.Errorf("OpenAPI v3 of %s: %w", k.Kind, err)
			}
		}
		opts.V2 = true
		s2, err := builder.BuildOpenAPIV2(crd, GroupVersion.Version, opts)
		if err != nil {
			return fmt.Errorf("OpenAPI v2 of %s: %w", k.Kind, err)
		}
		v2s, v3s = append(v2s, s2), append(v3s, s3)
	}
	merged, err := builder.MergeSpecs(emptySwagger(), v2s...)
	if err != nil {
		return fmt.Errorf("merge OpenAPI v2: %w", err)
	}
	if err := o.v2.UpdateSpec(merged); err != nil {
		return err
	}
	if len(v3s) == 0 {
		o.v3.UpdateGroupVersion(v3Path, emptyV3())
		return nil
	}
	merged3, err := builder.MergeSpecsV3(v3s...)
	if err != nil {
		return fmt.Errorf("merge OpenAPI v3: %w", err)
	}
	o.v3.UpdateGroupVersion(v3Path, merged3)
	return nil
}

// CRDFor describes kind k as a namespaced custom resource whose spec is the
// AD's schema as OpenAPI v3 publishes it (appschema.Schema.OpenAPI, the
// rule of valuesschema.OpenAPI: a kind whose schema has none is not
// served) and whose status is free-form.
func CRDFor(k *appkinds.Kind) *apiextensionsv1.CustomResourceDefinition {
	props := freeForm()
	if p := k.Schema.OpenAPI(); p != nil {
		props = *p.DeepCopy()
	}
	return crdWithSpec(k, props)
}

func freeForm() apiextensionsv1.JSONSchemaProps {
	t := true
	return apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &t}
}

func crdWithSpec(k *appkinds.Kind, specProps apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceDefinition {
	status := freeForm()
	status.Description = "Status of the application, synthesized from its HelmRelease."
	if specProps.Description == "" {
		specProps.Description = fmt.Sprintf("Values of the %s chart (schema from ApplicationDefinition %s).", k.Kind, k.Definition)
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: k.Plural + "." + GroupVersion.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: GroupVersion.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: k.Kind, ListKind: k.ListKind, Plural: k.Plural, Singular: k.Singular, ShortNames: k.ShortNames,
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: GroupVersion.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:        "object",
					Description: fmt.Sprintf("%s is an application of the apps.cozystack.io API, stored as a Flux HelmRelease.", k.Kind),
					Properties:  map[string]apiextensionsv1.JSONSchemaProps{"spec": specProps, "status": status},
				}},
			}},
		},
	}
}
