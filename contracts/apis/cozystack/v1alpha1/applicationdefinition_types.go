package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations an ApplicationDefinition may carry to tune the HelmReleases of
// its kind (contract K1). Values are Go durations ("15m") or booleans
// ("true"); a value that does not parse disables the kind with
// Served=False, reason InvalidAnnotation.
const (
	// AnnotationHelmInstallTimeout sets HelmRelease spec.install.timeout.
	AnnotationHelmInstallTimeout = "release.cozystack.io/helm-install-timeout"
	// AnnotationHelmUpgradeTimeout sets HelmRelease spec.upgrade.timeout.
	AnnotationHelmUpgradeTimeout = "release.cozystack.io/helm-upgrade-timeout"
	// AnnotationHelmInstallDisableWait sets HelmRelease spec.install.disableWait.
	AnnotationHelmInstallDisableWait = "release.cozystack.io/helm-install-disable-wait"
)

// Condition types and reasons on ApplicationDefinition status (K1).
const (
	// ConditionServed is True when the kind is served by the application API.
	ConditionServed = "Served"

	ReasonServed = "Served"
	// ReasonTerminating: Served=True on a deleted ApplicationDefinition
	// whose kind still has applications: the kind stays served, except
	// that no application of it can be created, until the last is deleted
	// (FinalizerApplications). The message names their count and
	// namespaces.
	ReasonTerminating   = "Terminating"
	ReasonInvalidSchema = "InvalidSchema"
	// ReasonUnpublishableSchema: Served=False for an openAPISchema that
	// validates but that the kind's OpenAPI document cannot carry (a $ref,
	// patternProperties...): kubectl explain and kubectl's validation
	// would not know the kind's fields. The message names the keyword and
	// the fix (k1-application.md, "Published OpenAPI").
	ReasonUnpublishableSchema = "UnpublishableSchema"
	ReasonInvalidAnnotation   = "InvalidAnnotation"
	ReasonPluralConflict      = "PluralConflict"
	ReasonKindConflict        = "KindConflict"
	ReasonInvalidPrefix       = "InvalidPrefix"
	ReasonInvalidRelease      = "InvalidRelease"
	ReasonInvalidNames        = "InvalidNames"
)

// FinalizerApplications is the finalizer cozystack-api puts on every
// ApplicationDefinition it reads: a deleted definition whose kind still has
// applications stays, served with reason Terminating, until the last of
// them is deleted, so no application's HelmRelease is ever left where the
// API does not show it (contract K1, "Lifecycle of a kind"). Removing it by
// hand orphans the applications: their HelmReleases stay, untouched, and a
// definition of the same kind serves them again.
const FinalizerApplications = "cozystack.io/applications"

// ApplicationDefinition declares one kind of the apps.cozystack.io API: its
// names, its values schema, and the Helm chart that implements it. Each
// object of the kind is stored as a Flux HelmRelease named
// <release.prefix><name>. Contract K1.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=ad;ads,categories=cozystack
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.application.kind`
// +kubebuilder:printcolumn:name="Plural",type=string,JSONPath=`.spec.application.plural`
// +kubebuilder:printcolumn:name="Served",type=string,JSONPath=`.status.conditions[?(@.type=="Served")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Served")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ApplicationDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ApplicationDefinitionSpec   `json:"spec,omitempty"`
	Status ApplicationDefinitionStatus `json:"status,omitempty"`
}

// ApplicationDefinitionSpec is the desired kind.
type ApplicationDefinitionSpec struct {
	// Application names the kind and carries its values schema.
	Application ApplicationDefinitionApplication `json:"application"`
	// Release says how objects of the kind become HelmReleases.
	Release ApplicationDefinitionRelease `json:"release"`
	// Secrets, Services and Ingresses are omitzero, not omitempty (which
	// never omits a struct): an AD without them round-trips without gaining
	// "{}".

	// Secrets selects the Secrets of a release that tenants may read.
	// +optional
	Secrets ApplicationDefinitionResources `json:"secrets,omitzero"`
	// Services selects the Services of a release that tenants may see.
	// +optional
	Services ApplicationDefinitionResources `json:"services,omitzero"`
	// Ingresses selects the Ingresses of a release that tenants may see.
	// +optional
	Ingresses ApplicationDefinitionResources `json:"ingresses,omitzero"`
	// Dashboard is how the dashboard presents the kind (contract K6).
	// +optional
	Dashboard *ApplicationDefinitionDashboard `json:"dashboard,omitempty"`
}

// ApplicationDefinitionApplication names the served kind.
type ApplicationDefinitionApplication struct {
	// Kind is the CamelCase kind, e.g. Postgres.
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	Kind string `json:"kind"`
	// Singular is the lowercase singular resource name, e.g. postgres.
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Singular string `json:"singular"`
	// Plural is the lowercase resource name in URLs, e.g. postgreses.
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Plural string `json:"plural"`
	// ShortNames are extra names kubectl accepts.
	// +optional
	ShortNames []string `json:"shortNames,omitempty"`
	// OpenAPISchema is the JSON Schema (as a JSON document in a string) of
	// the object's spec, which is also the chart's values. Extension keys:
	// x-cozystack-options, x-cozystack-widget, x-kubernetes-* as in CRDs,
	// and "deprecated": true for fields whose use draws a Warning.
	// +optional
	OpenAPISchema string `json:"openAPISchema,omitempty"`
}

// ApplicationDefinitionRelease says how an object becomes a HelmRelease.
type ApplicationDefinitionRelease struct {
	// Prefix is prepended to the object's name to form the HelmRelease name.
	// It must leave room for names within Helm's 53-character limit.
	// +optional
	Prefix string `json:"prefix"`
	// Labels are set on every HelmRelease of the kind.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// ChartRef is the Flux source of the chart (HelmRelease spec.chartRef).
	// Either chartRef or source+component is set.
	// +optional
	ChartRef *ChartRef `json:"chartRef,omitempty"`
	// Source and Component name a PackageSource and one of its catalog's
	// applications (catalog.yaml applications[].name); the chartRef is
	// derived from them (the ExternalArtifact the operator publishes for
	// it, named ComponentArtifactName(source, component)).
	// +optional
	Source string `json:"source,omitempty"`
	// +optional
	Component string `json:"component,omitempty"`
	// Install tunes HelmRelease spec.install. The annotations
	// release.cozystack.io/helm-install-* override it.
	// +optional
	Install *ReleaseAction `json:"install,omitempty"`
	// Upgrade tunes HelmRelease spec.upgrade. The annotation
	// release.cozystack.io/helm-upgrade-timeout overrides its timeout.
	// +optional
	Upgrade *ReleaseAction `json:"upgrade,omitempty"`
	// HealthCheckExprs are CEL health checks for custom resources the
	// chart creates (HelmRelease spec.healthCheckExprs).
	// +optional
	HealthCheckExprs []HealthCheckExpr `json:"healthCheckExprs,omitempty"`
}

// ChartRef references a Flux source holding the chart; the HelmRelease
// spec.chartRef.
type ChartRef struct {
	// Kind of the source: ExternalArtifact, OCIRepository or HelmChart.
	// +kubebuilder:validation:Enum=ExternalArtifact;OCIRepository;HelmChart
	Kind string `json:"kind"`
	// Name of the source.
	Name string `json:"name"`
	// Namespace of the source; defaults to the application's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// APIVersion of the source.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
}

// ReleaseAction tunes a Helm install or upgrade.
type ReleaseAction struct {
	// Timeout of the Helm action, a Go duration such as 15m.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// Retries on failure; -1 retries forever.
	// +optional
	Retries *int `json:"retries,omitempty"`
	// DisableWait skips waiting for resources to be ready.
	// +optional
	DisableWait bool `json:"disableWait,omitempty"`
}

// HealthCheckExpr is a CEL health check of one kind of resource (Flux
// HelmRelease healthCheckExprs).
type HealthCheckExpr struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// +optional
	InProgress string `json:"inProgress,omitempty"`
	// +optional
	Failed  string `json:"failed,omitempty"`
	Current string `json:"current"`
}

// ApplicationDefinitionResources includes and excludes resources of a
// release; exclude wins. A nil list is omitted from JSON, an empty one is
// kept as [] (omitzero), so upstream ADs' "exclude: []" round-trip.
type ApplicationDefinitionResources struct {
	// +optional
	Exclude []*ApplicationDefinitionResourceSelector `json:"exclude,omitzero"`
	// +optional
	Include []*ApplicationDefinitionResourceSelector `json:"include,omitzero"`
}

// ApplicationDefinitionResourceSelector matches resources by label or by name.
type ApplicationDefinitionResourceSelector struct {
	metav1.LabelSelector `json:",inline"`
	// ResourceNames are names (Helm templates such as
	// "{{ .name }}-credentials" allowed) of matching resources.
	// +optional
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// ApplicationDefinitionDashboard is the dashboard metadata of a kind (K6).
type ApplicationDefinitionDashboard struct {
	// Category is the sidebar section, e.g. PaaS, IaaS, NaaS, Administration.
	Category string `json:"category"`
	// Singular and Plural are display names.
	Singular string `json:"singular"`
	Plural   string `json:"plural"`
	// Name overrides the resource name used in the dashboard's URLs.
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// Icon is a base64-encoded SVG.
	// +optional
	Icon string `json:"icon,omitempty"`
	// +optional
	Tags []string `json:"tags,omitempty"`
	// Weight orders kinds within a category; lower first.
	// +optional
	Weight int `json:"weight,omitempty"`
	// Module marks tenant modules (enabled per tenant, one per tenant).
	// +optional
	Module bool `json:"module,omitempty"`
	// KeysOrder is the order of fields in forms, as field paths.
	// +optional
	KeysOrder [][]string `json:"keysOrder,omitempty"`
}

// ApplicationDefinitionStatus is what the API server observed of the AD.
type ApplicationDefinitionStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Served (True when the kind is served; False with a reason
	// such as InvalidSchema, PluralConflict or InvalidAnnotation and a
	// message naming the fix).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Group, Version and Resource served for this AD when Served is True.
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Resource string `json:"resource,omitempty"`
}

// ApplicationDefinitionList is a list of ApplicationDefinitions.
//
// +kubebuilder:object:root=true
type ApplicationDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ApplicationDefinition `json:"items"`
}
