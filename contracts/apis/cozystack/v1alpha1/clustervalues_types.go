package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Registered here rather than in groupversion.go so that each kind's file
// is self-contained.
func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &ClusterValues{}, &ClusterValuesList{})
		return nil
	})
}

// ClusterValuesName is the only name a ClusterValues may have: the resource
// is a cluster singleton (a CEL rule in the CRD refuses any other name).
const ClusterValuesName = "cluster"

// Condition types on ClusterValues status (contract K2). Ready, Reconciling
// and Stalled follow kstatus; Projected is K2's own.
const (
	// ConditionProjected is True when every tenant namespace carries the
	// values of the current generation.
	ConditionProjected = "Projected"
	// ConditionReady is True when the spec is valid and Projected is True.
	ConditionReady = "Ready"
	// ConditionReconciling is True (and only present) while tenant
	// namespaces lag behind the current generation.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True (and only present) when the projection cannot
	// progress without a change by a person: an invalid spec, a tenant
	// namespace whose values are invalid, or writes that keep failing.
	ConditionStalled = "Stalled"
)

// Reasons on ClusterValues conditions.
const (
	ReasonProjected              = "Projected"
	ReasonNoTenantNamespaces     = "NoTenantNamespaces"
	ReasonProjectionInProgress   = "ProjectionInProgress"
	ReasonInvalidSpec            = "InvalidSpec"
	ReasonInvalidNamespaceValues = "InvalidNamespaceValues"
	ReasonWriteFailed            = "WriteFailed"
)

// ClusterValues is the typed, schema-validated source of the cluster-wide
// values every chart reads as `_cluster` (contract K2). It replaces the
// untyped `cozystack-values` Secret. It is cluster-scoped and a singleton
// named "cluster" (ClusterValuesName).
//
// cozystack-controller projects it, together with each tenant namespace's
// own `_namespace` values (read from the Namespace's labels, see
// LabelTenant), into a ConfigMap named ValuesName in every tenant
// namespace; the JSON Schema of that ConfigMap's document is
// contracts/schemas/v1alpha1/k2-cluster-values.schema.json and the mapping
// from the fields below to `_cluster` keys is ClusterKeys.
//
// Every field a chart needs has a value: required fields must be set and
// non-empty, optional ones are defaulted by the API server or absent. A
// present-but-empty string is refused with 422 at write time.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cv,categories=cozystack
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'cluster'",message="ClusterValues is a singleton: metadata.name must be 'cluster'"
// +kubebuilder:printcolumn:name="Root Host",type=string,JSONPath=`.spec.rootHost`
// +kubebuilder:printcolumn:name="Projected",type=integer,JSONPath=`.status.projectedNamespaces`
// +kubebuilder:printcolumn:name="Total",type=integer,JSONPath=`.status.totalNamespaces`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterValues struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterValuesSpec   `json:"spec"`
	Status ClusterValuesStatus `json:"status,omitempty"`
}

// ClusterValuesSpec holds the `_cluster` values. Each field's comment names
// the `_cluster` key it becomes (see ClusterKeys).
//
// Groups are defaulted to {} so that the defaults of their fields apply
// when a group is left out.
type ClusterValuesSpec struct {
	// RootHost is the DNS name under which the platform publishes its
	// services (dashboard, API, Keycloak, Grafana) and from which tenant
	// hosts derive: `_cluster.root-host`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	RootHost string `json:"rootHost"`

	// APIServerEndpoint is the https URL of the Kubernetes API as users
	// reach it, written into the kubeconfigs the platform hands out:
	// `_cluster.api-server-endpoint`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https://[^\s/]+(/[^\s]*)?$`
	// +required
	APIServerEndpoint string `json:"apiServerEndpoint"`

	// Networking describes the cluster network.
	// +kubebuilder:default={}
	// +optional
	Networking ClusterValuesNetworking `json:"networking,omitzero"`

	// Publishing says how platform services are exposed outside the cluster.
	// +kubebuilder:default={}
	// +optional
	Publishing ClusterValuesPublishing `json:"publishing,omitzero"`

	// Certificates selects the cert-manager issuer of published services.
	// +kubebuilder:default={}
	// +optional
	Certificates ClusterValuesCertificates `json:"certificates,omitzero"`

	// OIDC configures single sign-on.
	// +kubebuilder:default={}
	// +optional
	OIDC ClusterValuesOIDC `json:"oidc,omitzero"`

	// Gateway configures the Gateway API (an alternative to Ingress).
	// +kubebuilder:default={}
	// +optional
	Gateway ClusterValuesGateway `json:"gateway,omitzero"`

	// Resources holds the allocation ratios charts use to derive a
	// container's requests from its limits (request = limit / ratio).
	// +kubebuilder:default={}
	// +optional
	Resources ClusterValuesResources `json:"resources,omitzero"`

	// Images configures where platform images are pulled from.
	// +optional
	Images ClusterValuesImages `json:"images,omitzero"`

	// Scheduling holds cluster-wide scheduling defaults: `_cluster.scheduling`.
	// +optional
	Scheduling ClusterValuesScheduling `json:"scheduling,omitzero"`

	// Branding customises the dashboard and the portals: `_cluster.branding`.
	// +optional
	Branding ClusterValuesBranding `json:"branding,omitzero"`

	// PodSecurity sets the Pod Security Standard of tenant namespaces.
	// +optional
	PodSecurity ClusterValuesPodSecurity `json:"podSecurity,omitzero"`
}

// ClusterValuesPodSecurity holds the Pod Security Standard the Tenant chart
// labels every tenant namespace with (pod-security.kubernetes.io/enforce,
// warn and audit). Only the cluster operator, who writes ClusterValues,
// raises it: a Tenant's values cannot.
type ClusterValuesPodSecurity struct {
	// TenantLevel is restricted, baseline or privileged:
	// `_cluster.tenant-pod-security`. Absent means restricted.
	// +kubebuilder:validation:Enum=restricted;baseline;privileged
	// +optional
	TenantLevel string `json:"tenantLevel,omitempty"`
}

// ClusterValuesNetworking describes the cluster network.
type ClusterValuesNetworking struct {
	// ClusterDomain is the DNS domain of Services inside the cluster:
	// `_cluster.cluster-domain`.
	// +kubebuilder:default="cozy.local"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	ClusterDomain string `json:"clusterDomain,omitempty"`
	// PodCIDR is the IPv4 pod network: `_cluster.ipv4-cluster-cidr`.
	// +optional
	PodCIDR CIDR `json:"podCIDR,omitempty"`
	// ServiceCIDR is the IPv4 Service network: `_cluster.ipv4-service-cidr`.
	// +optional
	ServiceCIDR CIDR `json:"serviceCIDR,omitempty"`
	// JoinCIDR is the IPv4 network joining nodes and pods (Kube-OVN's join
	// subnet): `_cluster.ipv4-join-cidr`.
	// +optional
	JoinCIDR CIDR `json:"joinCIDR,omitempty"`
}

// CIDR is an IP network in CIDR notation, e.g. 10.244.0.0/16.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="must be a CIDR such as 10.244.0.0/16"
type CIDR string

// IPAddress is an IPv4 or IPv6 address, e.g. 192.0.2.10.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule="isIP(self)",message="must be an IP address such as 192.0.2.10"
type IPAddress string

// ClusterValuesPublishing says how platform services are exposed.
type ClusterValuesPublishing struct {
	// ExposedServices are the platform services published on the root
	// host, e.g. dashboard, api, keycloak: `_cluster.expose-services`,
	// joined with ",".
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	ExposedServices []string `json:"exposedServices,omitempty"`
	// IngressName names the ingress (the tenant namespace running the
	// ingress controller) that publishes them: `_cluster.expose-ingress`.
	// +kubebuilder:default="tenant-root"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	IngressName string `json:"ingressName,omitempty"`
	// ExternalIPs are addresses the ingress answers on when there is no
	// load balancer: `_cluster.expose-external-ips`, joined with ",".
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +optional
	ExternalIPs []IPAddress `json:"externalIPs,omitempty"`
	// LoadBalancerClass is set on the LoadBalancer Services the platform
	// creates: `_cluster.load-balancer-class`. Absent means the cluster's
	// default load balancer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	LoadBalancerClass string `json:"loadBalancerClass,omitempty"`
}

// ClusterValuesCertificates selects the certificate issuer.
type ClusterValuesCertificates struct {
	// IssuerName is the cert-manager ClusterIssuer of published services:
	// `_cluster.issuer-name`.
	// +kubebuilder:default="letsencrypt-prod"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	IssuerName string `json:"issuerName,omitempty"`
	// Solver is the ACME challenge the issuer uses, http01 or dns01:
	// `_cluster.clusterissuer` (the key's legacy name).
	// +kubebuilder:default="http01"
	// +kubebuilder:validation:Enum=http01;dns01
	// +optional
	Solver string `json:"solver,omitempty"`
}

// ClusterValuesOIDC configures single sign-on.
type ClusterValuesOIDC struct {
	// Enabled turns on OIDC login for the dashboard and the Kubernetes API:
	// `_cluster.oidc-enabled` ("true" or "false").
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// IssuerURL is the OIDC issuer; absent means the platform's Keycloak
	// at https://keycloak.<rootHost>/realms/<realmName>:
	// `_cluster.oidc-issuer-url`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https://[^\s/]+(/[^\s]*)?$`
	// +optional
	IssuerURL string `json:"issuerURL,omitempty"`
	// ClientID is the OIDC client of the dashboard and kubeconfigs:
	// `_cluster.oidc-client-id`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClientID string `json:"clientID,omitempty"`
	// RealmName is the Keycloak realm of the platform:
	// `_cluster.oidc-realm-name`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][-A-Za-z0-9_.]*$`
	// +optional
	RealmName string `json:"realmName,omitempty"`
	// DashboardExtraRedirectURI is one more redirect URI allowed for the
	// dashboard client: `_cluster.extra-keycloak-redirect-uri-for-dashboard`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	DashboardExtraRedirectURI string `json:"dashboardExtraRedirectURI,omitempty"`
}

// ClusterValuesGateway configures the Gateway API.
type ClusterValuesGateway struct {
	// Enabled publishes tenant services through Gateway API resources:
	// `_cluster.gateway-api` ("true" or "false").
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// ClassName is the GatewayClass of tenant Gateways:
	// `_cluster.gateway-class-name`.
	// +kubebuilder:default="cilium"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClassName string `json:"className,omitempty"`
}

// AllocationRatio is a positive decimal number written as a string, e.g.
// "10" or "1.5" (Kubernetes APIs avoid floats).
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=16
// +kubebuilder:validation:Pattern=`^(0\.[0-9]*[1-9][0-9]*|[1-9][0-9]*(\.[0-9]+)?)$`
type AllocationRatio string

// ClusterValuesResources holds allocation ratios: a chart sets a
// container's request to its limit divided by the ratio.
type ClusterValuesResources struct {
	// CPUAllocationRatio: `_cluster.cpu-allocation-ratio`.
	// +kubebuilder:default="10"
	// +optional
	CPUAllocationRatio AllocationRatio `json:"cpuAllocationRatio,omitempty"`
	// MemoryAllocationRatio: `_cluster.memory-allocation-ratio`.
	// +kubebuilder:default="1"
	// +optional
	MemoryAllocationRatio AllocationRatio `json:"memoryAllocationRatio,omitempty"`
	// EphemeralStorageAllocationRatio:
	// `_cluster.ephemeral-storage-allocation-ratio`.
	// +kubebuilder:default="40"
	// +optional
	EphemeralStorageAllocationRatio AllocationRatio `json:"ephemeralStorageAllocationRatio,omitempty"`
}

// ClusterValuesImages configures image pulls.
type ClusterValuesImages struct {
	// Registry replaces the registry of platform images, e.g. a mirror
	// such as registry.example.org/cozystack: `_cluster.images-registry`.
	// Absent means each image's own registry.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	// +optional
	Registry string `json:"registry,omitempty"`
}

// ClusterValuesScheduling holds scheduling defaults.
type ClusterValuesScheduling struct {
	// DefaultSchedulingClass is the SchedulingClass applied to workloads of
	// tenants that name none: `_cluster.scheduling.defaultSchedulingClass`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	DefaultSchedulingClass string `json:"defaultSchedulingClass,omitempty"`
}

// ClusterValuesBranding customises the dashboard: each field becomes the
// key of the same name under `_cluster.branding`.
type ClusterValuesBranding struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	TitleText string `json:"titleText,omitempty"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	FooterText string `json:"footerText,omitempty"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	TenantText string `json:"tenantText,omitempty"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +optional
	LogoText string `json:"logoText,omitempty"`
	// LogoSVG is an SVG document, base64-encoded.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	// +optional
	LogoSVG string `json:"logoSvg,omitempty"`
	// IconSVG is an SVG document, base64-encoded.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	// +optional
	IconSVG string `json:"iconSvg,omitempty"`
}

// ClusterValuesStatus reports how far the projection has got.
type ClusterValuesStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// TotalNamespaces is the number of tenant namespaces (those labelled
	// LabelTenant).
	// +optional
	TotalNamespaces int32 `json:"totalNamespaces"`
	// ProjectedNamespaces is the number of tenant namespaces whose values
	// ConfigMap (and legacy Secret, while it is written) carries the
	// values of ObservedGeneration.
	// +optional
	ProjectedNamespaces int32 `json:"projectedNamespaces"`
	// Conditions: Ready, Projected, and while applicable Reconciling and
	// Stalled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterValuesList is a list of ClusterValues (at most one).
//
// +kubebuilder:object:root=true
type ClusterValuesList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterValues `json:"items"`
}
