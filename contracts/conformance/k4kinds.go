package conformance

// The kinds of K4-application-rights (k4rights.go): the resource and
// scope each kind a chart renders maps to, from Kubernetes' built-in kinds
// and the CRDs the catalog's charts ship.

import (
	"maps"
	"reflect"
	"slices"

	"helm.sh/helm/v3/pkg/chart"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// clusterScopedKinds are Kubernetes' built-in cluster-scoped kinds
// (`kubectl api-resources --namespaced=false`); every other built-in kind
// is namespaced.
var clusterScopedKinds = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true, {Kind: "Node"}: true, {Kind: "PersistentVolume"}: true, {Kind: "ComponentStatus"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "authentication.k8s.io", Kind: "TokenReview"}:                             true,
	{Group: "authentication.k8s.io", Kind: "SelfSubjectReview"}:                       true,
	{Group: "authorization.k8s.io", Kind: "SubjectAccessReview"}:                      true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview"}:                  true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectRulesReview"}:                   true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                        true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}:                      true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                                   true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                                 true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                   true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:                                 true,
	{Group: "resource.k8s.io", Kind: "DeviceTaintRule"}:                               true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}:                          true,
	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}:               true,
}

// kindInfo is what the rule needs of a kind: its resource and scope.
type kindInfo struct {
	resource      string
	clusterScoped bool
}

// kindMapper maps the kinds a catalog's charts render to their resource
// and scope, whatever their version (both are the same in every version of
// a kind).
type kindMapper map[schema.GroupKind]kindInfo

// builtinMapper knows Kubernetes' built-in kinds: the objects of
// client-go's scheme, and CustomResourceDefinition and APIService, which
// it leaves out. Their resources are the plurals Kubernetes derives from
// their kinds (meta.UnsafeGuessKindToResource, as the API server's own
// RESTMapper for built-in types).
func builtinMapper() kindMapper {
	m := kindMapper{}
	objectType := reflect.TypeFor[metav1.Object]()
	add := func(gvk schema.GroupVersionKind) {
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		m[gvk.GroupKind()] = kindInfo{resource: plural.Resource, clusterScoped: clusterScopedKinds[gvk.GroupKind()]}
	}
	for gvk, t := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version != runtime.APIVersionInternal && reflect.PointerTo(t).Implements(objectType) {
			add(gvk)
		}
	}
	add(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	add(schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"})
	return m
}

// newKindMapper knows Kubernetes' built-in kinds and the kinds of the
// CRDs every chart of the catalog (and its dependencies) ships in crds/.
func newKindMapper(charts map[string]*chart.Chart) kindMapper {
	m := builtinMapper()
	for _, p := range slices.Sorted(maps.Keys(charts)) {
		for _, crd := range chartCRDs(charts[p]) {
			gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
			m[gk] = kindInfo{resource: crd.Spec.Names.Plural, clusterScoped: crd.Spec.Scope == apiextensionsv1.ClusterScoped}
		}
	}
	return m
}

// mapping returns the resource and scope of gvk, ok false when the kind is
// neither built-in nor of a catalog's CRD.
func (m kindMapper) mapping(gvk schema.GroupVersionKind) (resource string, clusterScoped, ok bool) {
	k, ok := m[gvk.GroupKind()]
	return k.resource, k.clusterScoped, ok
}

// chartCRDs decodes the CustomResourceDefinitions in the crds/
// directories of c and its dependencies; other documents are skipped.
func chartCRDs(c *chart.Chart) []*apiextensionsv1.CustomResourceDefinition {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range c.CRDObjects() {
		docs, _ := decodeDocuments(f.File.Data)
		for _, d := range docs {
			if d.GetKind() != "CustomResourceDefinition" || d.GetAPIVersion() != apiextensionsv1.SchemeGroupVersion.String() {
				continue
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object, crd) == nil && crd.Spec.Names.Kind != "" {
				out = append(out, crd)
			}
		}
	}
	return out
}
