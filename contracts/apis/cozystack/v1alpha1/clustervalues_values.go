package v1alpha1

import (
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
)

// Names of the projected values (contract K2). The document stored under
// ValuesKey is described by contracts/schemas/v1alpha1/k2-cluster-values.schema.json
// and documented, key by key, in k2-cluster-values.md beside it.
const (
	// ValuesName is the name of the ConfigMap (and, while the legacy Secret
	// is dual-written, of the Secret) in each tenant namespace.
	ValuesName = "cozystack-values"
	// ValuesKey is the data key holding the values document: YAML with the
	// two top-level objects `_cluster` and `_namespace`.
	ValuesKey = "values.yaml"
	// ClusterObject and NamespaceObject are the two top-level keys of the
	// document.
	ClusterObject   = "_cluster"
	NamespaceObject = "_namespace"
)

// Labels and annotations of the projection.
const (
	// LabelTenant marks a tenant namespace: the controller projects the
	// values into every namespace carrying it, whatever its value (the
	// tenant chart sets it to the tenant's name).
	LabelTenant = "namespace.cozystack.io/tenant"

	// The `_namespace` values of a tenant namespace, read from labels of the
	// Namespace the tenant chart sets. An annotation with the same key takes
	// precedence over the label, for values a label cannot hold (a host
	// longer than 63 characters). An empty value means the key is absent.
	LabelHost            = "namespace.cozystack.io/host"
	LabelIngress         = "namespace.cozystack.io/ingress"
	LabelMonitoring      = "namespace.cozystack.io/monitoring"
	LabelEtcd            = "namespace.cozystack.io/etcd"
	LabelSeaweedFS       = "namespace.cozystack.io/seaweedfs"
	LabelGateway         = "namespace.cozystack.io/gateway"
	LabelSchedulingClass = "namespace.cozystack.io/scheduling-class"

	// LabelFluxWatch with value FluxWatchEnabled is on every projected
	// object: helm-controller (v1.4.0, --watch-configs-label-selector
	// default) watches ConfigMaps and Secrets carrying it and re-reconciles
	// the HelmReleases whose valuesFrom reference them.
	LabelFluxWatch   = "reconcile.fluxcd.io/watch"
	FluxWatchEnabled = "Enabled"

	// AnnotationGeneration on a projected object is the
	// metadata.generation of the ClusterValues it was rendered from, in
	// decimal.
	AnnotationGeneration = "cozystack.io/cluster-values-generation"

	// AnnotationValuesSource on a tenant Namespace says which object the
	// namespace's HelmReleases read their values from: ValuesSourceConfigMap
	// (the default when absent) or ValuesSourceSecret (the legacy Secret,
	// during a migration). See contracts/schemas/v1alpha1/k2-migration.md.
	AnnotationValuesSource = "cozystack.io/values-source"
	ValuesSourceConfigMap  = "configmap"
	ValuesSourceSecret     = "secret"
)

// namespaceKeys maps each `_namespace` key to the label (or annotation)
// it is read from.
var namespaceKeys = []struct{ key, label string }{
	{"host", LabelHost},
	{"ingress", LabelIngress},
	{"monitoring", LabelMonitoring},
	{"etcd", LabelEtcd},
	{"seaweedfs", LabelSeaweedFS},
	{"gateway", LabelGateway},
	{"schedulingClass", LabelSchedulingClass},
}

// ClusterKeys returns the `_cluster` object of contract K2 rendered from
// spec: every value is a string (as in the legacy Secret, so charts that
// compare `(index .Values._cluster "oidc-enabled") "true"` keep working),
// except `scheduling` and `branding`, which are objects of strings. A key
// whose field is unset (or an empty list or group) is absent: no key is
// ever present with an empty value. The result is a fresh map.
//
// Required keys (non-empty in any spec the CRD admits; the schema checks
// them again): root-host, api-server-endpoint, cluster-domain,
// expose-ingress, issuer-name, clusterissuer, oidc-enabled, gateway-api,
// gateway-class-name and the three allocation ratios.
func ClusterKeys(spec *ClusterValuesSpec) map[string]any {
	m := map[string]any{}
	put := func(key, value string) {
		if value != "" {
			m[key] = value
		}
	}
	put("root-host", spec.RootHost)
	put("api-server-endpoint", spec.APIServerEndpoint)

	put("cluster-domain", spec.Networking.ClusterDomain)
	put("ipv4-cluster-cidr", string(spec.Networking.PodCIDR))
	put("ipv4-service-cidr", string(spec.Networking.ServiceCIDR))
	put("ipv4-join-cidr", string(spec.Networking.JoinCIDR))

	put("expose-services", strings.Join(spec.Publishing.ExposedServices, ","))
	put("expose-ingress", spec.Publishing.IngressName)
	ips := make([]string, len(spec.Publishing.ExternalIPs))
	for i, ip := range spec.Publishing.ExternalIPs {
		ips[i] = string(ip)
	}
	put("expose-external-ips", strings.Join(ips, ","))
	put("load-balancer-class", spec.Publishing.LoadBalancerClass)

	put("issuer-name", spec.Certificates.IssuerName)
	put("clusterissuer", spec.Certificates.Solver)

	put("oidc-enabled", fmt.Sprint(spec.OIDC.Enabled))
	put("oidc-issuer-url", spec.OIDC.IssuerURL)
	put("oidc-client-id", spec.OIDC.ClientID)
	put("oidc-realm-name", spec.OIDC.RealmName)
	put("extra-keycloak-redirect-uri-for-dashboard", spec.OIDC.DashboardExtraRedirectURI)

	put("gateway-api", fmt.Sprint(spec.Gateway.Enabled))
	put("gateway-class-name", spec.Gateway.ClassName)

	put("cpu-allocation-ratio", string(spec.Resources.CPUAllocationRatio))
	put("memory-allocation-ratio", string(spec.Resources.MemoryAllocationRatio))
	put("ephemeral-storage-allocation-ratio", string(spec.Resources.EphemeralStorageAllocationRatio))

	put("images-registry", spec.Images.Registry)
	put("tenant-pod-security", spec.PodSecurity.TenantLevel)

	if s := spec.Scheduling.DefaultSchedulingClass; s != "" {
		m["scheduling"] = map[string]any{"defaultSchedulingClass": s}
	}
	b := spec.Branding
	branding := map[string]any{}
	for key, value := range map[string]string{
		"titleText": b.TitleText, "footerText": b.FooterText, "tenantText": b.TenantText,
		"logoText": b.LogoText, "logoSvg": b.LogoSVG, "iconSvg": b.IconSVG,
	} {
		if value != "" {
			branding[key] = value
		}
	}
	if len(branding) > 0 {
		m["branding"] = branding
	}
	return m
}

// NamespaceKeys returns the `_namespace` object of contract K2 for a tenant
// Namespace with the given labels and annotations: host, ingress,
// monitoring, etcd, seaweedfs, gateway and schedulingClass, each read from
// the annotation or, failing that, the label named by the Label*
// constants. A key with no or an empty value is absent. It returns an
// error, naming the label, when host is absent: a chart must never render
// an empty host.
func NamespaceKeys(labels, annotations map[string]string) (map[string]any, error) {
	m := map[string]any{}
	for _, k := range namespaceKeys {
		if value := NamespaceValue(labels, annotations, k.label); value != "" {
			m[k.key] = value
		}
	}
	if _, ok := m["host"]; !ok {
		return nil, fmt.Errorf("the namespace has no host: set the label (or annotation) %s", LabelHost)
	}
	return m, nil
}

// NamespaceValue is the value a tenant Namespace with the given labels and
// annotations holds under key (one of the Label* constants): the
// annotation, which holds what a label cannot (a host over 63
// characters), or else the label; "" for neither.
func NamespaceValue(labels, annotations map[string]string, key string) string {
	if v := annotations[key]; v != "" {
		return v
	}
	return labels[key]
}

// Values returns the whole K2 values document, {"_cluster": ClusterKeys(spec),
// "_namespace": NamespaceKeys(labels, annotations)}, or NamespaceKeys' error.
func Values(spec *ClusterValuesSpec, labels, annotations map[string]string) (map[string]any, error) {
	ns, err := NamespaceKeys(labels, annotations)
	if err != nil {
		return nil, err
	}
	return map[string]any{ClusterObject: ClusterKeys(spec), NamespaceObject: ns}, nil
}

// ValuesSource returns the values source a tenant Namespace's annotations
// select, ValuesSourceConfigMap or ValuesSourceSecret: the value of
// AnnotationValuesSource, ValuesSourceConfigMap when it is absent or empty.
// Any other value is an error naming the annotation.
func ValuesSource(annotations map[string]string) (string, error) {
	switch v := annotations[AnnotationValuesSource]; v {
	case "", ValuesSourceConfigMap:
		return ValuesSourceConfigMap, nil
	case ValuesSourceSecret:
		return ValuesSourceSecret, nil
	default:
		return "", fmt.Errorf("annotation %s is %q; want %q or %q", AnnotationValuesSource, v, ValuesSourceConfigMap, ValuesSourceSecret)
	}
}

// ValuesKind returns the kind of the object HelmReleases reference in
// valuesFrom (name ValuesName, valuesKey ValuesKey, not optional) for a
// values source: "ConfigMap" for ValuesSourceConfigMap, "Secret" for
// ValuesSourceSecret. The application API uses it to build the valuesFrom
// of new HelmReleases, so that they agree with the controller that moves
// existing ones.
func ValuesKind(source string) string {
	if source == ValuesSourceSecret {
		return "Secret"
	}
	return "ConfigMap"
}

// ValuesReference is the valuesFrom entry by which a HelmRelease takes its
// namespace's cluster values: kind ValuesKind(source), name ValuesName,
// key ValuesKey. An application's HelmRelease takes it not optional, so
// that it waits for the values instead of rendering without them (contract
// K2); a Package component's takes it optional, except the Tenant chart's.
func ValuesReference(source string, optional bool) meta.ValuesReference {
	return meta.ValuesReference{Kind: ValuesKind(source), Name: ValuesName, ValuesKey: ValuesKey, Optional: optional}
}
