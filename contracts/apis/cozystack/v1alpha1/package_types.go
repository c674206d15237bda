package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Registered here rather than in groupversion.go so that each kind's file
// is self-contained.
func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &Package{}, &PackageList{})
		return nil
	})
}

// Reasons on Package conditions (types: ConditionReady,
// ConditionReconciling, ConditionStalled). ReasonRequirementsNotMet is
// shared with PackageSource.
const (
	// ReasonInstalled: Ready=True; every enabled component's HelmRelease
	// is Ready at status.installedRevision.
	ReasonInstalled = "Installed"
	// ReasonInstalling: Reconciling=True while HelmReleases are created,
	// upgraded or removed.
	ReasonInstalling = "Installing"
	// ReasonChartNotPublished: Reconciling=True while the PackageSource
	// has not yet published the chart (ExternalArtifact) of an enabled
	// component; a source publishes a component's chart once a Package
	// enables it.
	ReasonChartNotPublished = "ChartNotPublished"
	// ReasonSourceMissing: the PackageSource does not exist (deleting a
	// PackageSource never removes what its Packages installed).
	ReasonSourceMissing = "SourceMissing"
	// ReasonSourceNotReady: the PackageSource has never served a revision.
	ReasonSourceNotReady = "SourceNotReady"
	// ReasonVariantMissing: spec.variant is not a variant of the source.
	ReasonVariantMissing = "VariantMissing"
	// ReasonComponentMissing: spec.components names a component the
	// variant lacks.
	ReasonComponentMissing = "ComponentMissing"
	// ReasonDependencyCycle: dependsOn across components or packages forms
	// a cycle; the message lists it.
	ReasonDependencyCycle = "DependencyCycle"
	// ReasonDependencyNotReady: a catalog or component this one depends on
	// is not installed or not Ready yet.
	ReasonDependencyNotReady = "DependencyNotReady"
	// ReasonPrivilegeNotAllowed: an enabled component is privileged and
	// spec.allowPrivileged is false; nothing is installed.
	ReasonPrivilegeNotAllowed = "PrivilegeNotAllowed"
	// ReasonConflict: an object this Package would write (a HelmRelease,
	// its identity or its values) exists and its controller is not this
	// Package (by UID): another Package, something else, or nothing (labels
	// and annotations never make an object the Package's). The message
	// names the owner, or the application whose release it is, and who must
	// act. It is never overwritten.
	ReasonConflict = "Conflict"
	// ReasonPrivilegeChangeRequiresApproval: the source's revision asks for
	// privileged rights the Package was not granted; the message lists
	// them and the digest to approve (spec.approvedPrivileges). The
	// installed revision is kept (its HelmReleases suspended) and nothing
	// is widened meanwhile.
	ReasonPrivilegeChangeRequiresApproval = "PrivilegeChangeRequiresApproval"
	// ReasonNamespaceNotAllowed: a component, privileged or not, would
	// install into a namespace its Package does not own: a reserved one
	// (ReservedNamespace: kube-*, default, cozy-system, flux-system,
	// cozy-releases-*, tenant-*), a tenant's, another Package's (unless
	// both consent, spec.sharedNamespaces), a deleted Package's of another
	// catalog, or one made outside the platform. The message names each
	// namespace, its owner and the fix; nothing is written.
	ReasonNamespaceNotAllowed = "NamespaceNotAllowed"
	// ReasonInstallFailed: helm-controller failed to install or upgrade a
	// component; the message carries its error (e.g. an RBAC "forbidden").
	ReasonInstallFailed = "InstallFailed"
	// ReasonHeld: spec.version pins a version other than the source's; the
	// installed revision is kept.
	ReasonHeld = "Held"
)

// Package installs one variant of a PackageSource's catalog: one
// HelmRelease per enabled component, through a ServiceAccount of its own
// bound to only the RBAC rules its components declare. Cluster-scoped.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=pkg,categories=cozystack
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.sourceRef.name`
// +kubebuilder:printcolumn:name="Variant",type=string,JSONPath=`.spec.variant`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.installedVersion`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Package struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PackageSpec   `json:"spec"`
	Status PackageStatus `json:"status,omitempty"`
}

// PackageSpec chooses what to install from a source.
type PackageSpec struct {
	// SourceRef names the PackageSource.
	SourceRef PackageSourceReference `json:"sourceRef"`
	// Variant is the name of one of the source's variants.
	// +kubebuilder:default=default
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Variant string `json:"variant,omitempty"`
	// Components tunes the variant's components, keyed by component name.
	// A component not listed is installed with the catalog's values.
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'))",message="component names are DNS labels"
	// +optional
	Components map[string]PackageComponentSettings `json:"components,omitempty"`
	// Version holds the Package at this catalog version (exact SemVer):
	// while the source serves another version, the installed revision is
	// kept and Ready carries reason Held. Empty follows the source.
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$`
	// +optional
	Version string `json:"version,omitempty"`
	// AllowPrivileged consents to installing the variant's privileged
	// components with the cluster-wide rules they declare. Without it a
	// Package with an enabled privileged component is Ready=False, reason
	// PrivilegeNotAllowed, and installs nothing.
	// +optional
	AllowPrivileged bool `json:"allowPrivileged,omitempty"`
	// ApprovedPrivileges approves the privileged rights of one revision by
	// their digest ("sha256:<hex>", as the PrivilegeChangeRequiresApproval
	// message gives it). allowPrivileged consents to what the Package
	// grants when it is first installed; a later revision that asks for
	// any right not granted yet (a new rule, a new privileged component, a
	// component moved to another namespace) stops, keeping the installed
	// revision, until this field holds the digest of exactly what it asks
	// for. Asking for less needs no approval.
	// +optional
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	ApprovedPrivileges string `json:"approvedPrivileges,omitempty"`
	// SharedNamespaces consents to sharing namespaces with other Packages.
	// A namespace belongs to the one Package that first installs into it
	// (the operator records the claim on the Namespace); another Package
	// whose components are declared in it installs there only when both
	// catalogs declare components in it and both Packages list each other
	// here for it. Otherwise the later one is Ready=False, reason
	// NamespaceNotAllowed, naming the owner and what to set (docs/operator/catalogs.md,
	// "Catalog delivery", "Ownership").
	// +optional
	// +listType=map
	// +listMapKey=namespace
	// +kubebuilder:validation:MaxItems=64
	SharedNamespaces []SharedNamespace `json:"sharedNamespaces,omitempty"`
}

// SharedNamespace consents to sharing one namespace with other Packages.
type SharedNamespace struct {
	// Namespace is the shared namespace, a DNS label.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// Packages are the names of the other Packages this one may share
	// Namespace with; each must name this one for Namespace too.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:MinLength=1
	// +listType=set
	Packages []string `json:"packages"`
}

// SharesWith reports whether s consents to sharing namespace with the
// Package named other.
func (s *PackageSpec) SharesWith(namespace, other string) bool {
	for _, sn := range s.SharedNamespaces {
		if sn.Namespace == namespace {
			for _, p := range sn.Packages {
				if p == other {
					return true
				}
			}
		}
	}
	return false
}

// PrivilegedComponent is what one privileged component is granted: the
// namespace it installs into and its namespaced and cluster-wide rules.
type PrivilegedComponent struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// +optional
	Rules []rbacv1.PolicyRule `json:"rules,omitempty"`
	// +optional
	ClusterRules []rbacv1.PolicyRule `json:"clusterRules,omitempty"`
	// ConversionWebhooks are the CRDs the component may give a conversion
	// webhook (PackageComponent.ConversionWebhooks).
	// +optional
	ConversionWebhooks []string `json:"conversionWebhooks,omitempty"`
}

// GrantedPrivileges records the privileged rights a Package was granted:
// what the cluster operator consented to, which a later revision may not
// exceed without approval (PackageSpec.ApprovedPrivileges).
type GrantedPrivileges struct {
	// Digest is "sha256:<hex>" of Components (PrivilegesDigest).
	Digest string `json:"digest"`
	// Components are the privileged components granted, by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Components []PrivilegedComponent `json:"components,omitempty"`
}

// PackageSourceReference names a PackageSource.
type PackageSourceReference struct {
	// Name of the PackageSource.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// PackageComponentSettings tunes one component of the chosen variant.
type PackageComponentSettings struct {
	// Enabled installs the component; default true. Setting it false on an
	// installed component removes its HelmRelease.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// Values override the catalog's values and the cluster values (K2) for
	// this component's chart. A JSON object.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Values *apiextensionsv1.JSON `json:"values,omitempty"`
}

// IsEnabled reports whether the component is to be installed: Enabled, or
// true when unset.
func (s PackageComponentSettings) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// PackageStatus is what the operator installed.
type PackageStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (True with Installed; False with a reason above and
	// a message naming the fix), Reconciling, Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// InstalledRevision is the source revision ("<version>@<digest>") whose
	// components were last all installed.
	// +optional
	InstalledRevision string `json:"installedRevision,omitempty"`
	// InstalledVersion is the catalog version of InstalledRevision.
	// +optional
	InstalledVersion string `json:"installedVersion,omitempty"`
	// Components are the enabled components and their HelmReleases.
	// +optional
	// +listType=map
	// +listMapKey=name
	Components []PackageComponentStatus `json:"components,omitempty"`
	// Namespaces are the namespaces that hold, or may hold, objects of this
	// Package: its components' namespaces, and those of removed components
	// until their objects are gone. The operator looks for the Package's
	// objects to remove only there.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
	// GrantedPrivileges are the privileged rights the Package holds: set
	// when it installs, kept while nothing more is asked for.
	// +optional
	GrantedPrivileges *GrantedPrivileges `json:"grantedPrivileges,omitempty"`
}

// PackageComponentStatus is one installed component.
type PackageComponentStatus struct {
	// Name of the component.
	Name string `json:"name"`
	// HelmRelease is the component's HelmRelease.
	// +optional
	HelmRelease *NamespacedObjectReference `json:"helmRelease,omitempty"`
	// Ready mirrors the HelmRelease's Ready condition.
	// +optional
	Ready bool `json:"ready,omitempty"`
}

// NamespacedObjectReference names an object in a namespace.
type NamespacedObjectReference struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// PackageList is a list of Packages.
//
// +kubebuilder:object:root=true
type PackageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Package `json:"items"`
}

// PrivilegesDigest is "sha256:<hex>" of the JSON of components, which the
// caller gives sorted by name: the digest spec.approvedPrivileges names.
func PrivilegesDigest(components []PrivilegedComponent) string {
	if components == nil {
		components = []PrivilegedComponent{}
	}
	raw, _ := json.Marshal(components)
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}
