package v1alpha1

import (
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Registered here rather than in groupversion.go so that each kind's file
// is self-contained.
func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &PackageSource{}, &PackageSourceList{})
		return nil
	})
}

// Reasons on PackageSource conditions. The condition types are the kstatus
// ones shared with the other kinds of this group: ConditionReady,
// ConditionReconciling and ConditionStalled.
const (
	// ReasonArtifactReady: Ready=True; the artifact in status.artifact was
	// pulled, verified and unpacked, and its charts are served.
	ReasonArtifactReady = "ArtifactReady"
	// ReasonProgressing: Reconciling=True while a new revision is pulled.
	ReasonProgressing = "Progressing"
	// ReasonPullFailed: the registry or layout could not be read (network,
	// authentication, missing tag or pull Secret). Retried; the last good
	// revision stays served.
	ReasonPullFailed = "PullFailed"
	// ReasonDigestMismatch: a blob's bytes do not hash to the digest that
	// references it; the message names both digests. Nothing is cached
	// under the requested digest; the last good revision stays served.
	ReasonDigestMismatch = "DigestMismatch"
	// ReasonInvalidArtifact: the artifact is not a catalog of this format
	// (artifactType, media types, catalog metadata); the message names the
	// field.
	ReasonInvalidArtifact = "InvalidArtifact"
	// ReasonUnsafeArchive: a chart archive has an entry that would leave
	// the unpack directory, a link leaving it, a device file, or exceeds
	// the size limits.
	ReasonUnsafeArchive = "UnsafeArchive"
	// ReasonRequirementsNotMet: the platform is older than the catalog's
	// minPlatformVersion or lacks a required K3 property. Used on
	// PackageSource and Package; nothing is installed.
	ReasonRequirementsNotMet = "RequirementsNotMet"
	// ReasonKindInUse: Ready=False; the newest revision drops an
	// application kind that still has applications and spec.kindRemoval
	// is Wait. The message names each kind, its applications' count and
	// namespaces; nothing of the revision is installed until they are
	// deleted or spec.kindRemoval is Terminate.
	ReasonKindInUse = "KindInUse"
	// ReasonIncompatibleValues: Ready=False; the newest revision changes
	// the schema of an installed kind so that values existing applications
	// store would no longer validate (a removed, renamed or narrowed key,
	// docs/operator/catalogs.md "Catalog delivery"). The message names the revision, each
	// kind, its keys, the applications' count and namespaces, and the
	// fix; nothing of the revision is installed until the applications or
	// the catalog change, or spec.approvedIncompatibleRevision names the
	// revision's digest.
	ReasonIncompatibleValues = "IncompatibleValues"
)

// PackageSource is where a catalog's artifact comes from: one OCI artifact
// (see contracts/artifact) in a registry or an OCI image-layout directory.
// The operator pulls it, verifies every digest, unpacks its charts safely,
// serves them to Flux, and reports in status what the artifact says about
// itself. Cluster-scoped.
//
// The spec holds only what the cluster operator decides: where the artifact
// is and how to fetch it. Everything the catalog author decides (name,
// version, requirements, provided kinds, variants and components with their
// privileges and RBAC, application charts) is in the artifact's config
// blob, versioned and digested together with the charts it describes, and
// is copied into status. So a variant can never point at a chart the artifact lacks, a
// version pin pins the components as well as the charts, and nobody can
// raise a component's privileges without publishing a new artifact.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=pkgsrc,categories=cozystack
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Catalog",type=string,JSONPath=`.status.catalog.name`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.catalog.version`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Digest",type=string,JSONPath=`.status.artifact.digest`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PackageSource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PackageSourceSpec   `json:"spec"`
	Status PackageSourceStatus `json:"status,omitempty"`
}

// PackageSourceSpec says where the artifact is. Exactly one of oci and
// layout is set.
//
// +kubebuilder:validation:XValidation:rule="has(self.oci) != has(self.layout)",message="set exactly one of spec.oci and spec.layout"
type PackageSourceSpec struct {
	// OCI is an artifact in an OCI registry.
	// +optional
	OCI *OCISource `json:"oci,omitempty"`
	// Layout is an artifact in an OCI image-layout directory on the
	// operator's file system (the embedded default source, and air-gapped
	// installs).
	// +optional
	Layout *LayoutSource `json:"layout,omitempty"`
	// Interval is how often the operator resolves the tag again to notice a
	// new digest, a Go duration; default 10m. A digest reference is never
	// re-resolved.
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
	// KindRemoval is what happens to a revision that drops an application
	// kind (an ApplicationDefinition of the served revision, by its
	// spec.application.kind) while applications of that kind exist
	// (contract K1, "Lifecycle of a kind"). Wait (the default) installs
	// nothing of such a revision: the served revision stays, Ready is
	// False with reason KindInUse naming the kind, the number of its
	// applications and their namespaces, and the revision is installed
	// once they are gone. Terminate installs it and deletes the kind's
	// definition, which cozystack-api keeps serving as Terminating (no new
	// applications; the existing ones are read, updated and deleted as
	// before) until the last of them is deleted.
	// +optional
	// +kubebuilder:validation:Enum=Wait;Terminate
	// +kubebuilder:default=Wait
	KindRemoval KindRemovalPolicy `json:"kindRemoval,omitempty"`
	// ApprovedIncompatibleRevision is the artifact digest (the manifest's,
	// status.artifact.digest, e.g. "sha256:3b1f…") of one revision the
	// cluster operator lets install although existing applications store
	// values its schemas no longer accept (reason IncompatibleValues,
	// docs/operator/catalogs.md "Catalog delivery"): those applications fail their next
	// upgrade until their values are changed. It applies to that digest
	// only; any other revision is checked as usual.
	// +kubebuilder:validation:Pattern=`^sha256:[a-f0-9]{64}$`
	// +optional
	ApprovedIncompatibleRevision string `json:"approvedIncompatibleRevision,omitempty"`
}

// KindRemovalPolicy is PackageSourceSpec.KindRemoval.
type KindRemovalPolicy string

// The values of PackageSourceSpec.KindRemoval.
const (
	KindRemovalWait      KindRemovalPolicy = "Wait"
	KindRemovalTerminate KindRemovalPolicy = "Terminate"
)

// OCISource is an artifact in a registry: repository plus exactly one of
// tag and digest.
//
// +kubebuilder:validation:XValidation:rule="has(self.tag) != has(self.digest)",message="set exactly one of tag and digest"
type OCISource struct {
	// Repository is the registry host (with port) and repository path,
	// without scheme, tag or digest, e.g. "ghcr.io/acme/catalogs/services"
	// or "127.0.0.1:5000/catalogs/demo".
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9.-]+(:[0-9]+)?/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$`
	Repository string `json:"repository"`
	// Tag to resolve, e.g. the catalog version "1.4.0".
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`
	// +optional
	Tag string `json:"tag,omitempty"`
	// Digest of the manifest, e.g. "sha256:3b1f…"; pins the artifact.
	// +kubebuilder:validation:Pattern=`^sha256:[a-f0-9]{64}$`
	// +optional
	Digest string `json:"digest,omitempty"`
	// PullSecretRef names a Secret of type kubernetes.io/dockerconfigjson in
	// the system namespace (cozy-system, SystemNamespace). Only that
	// namespace: a cluster-scoped object naming Secrets anywhere would let
	// whoever may create PackageSources read any namespace's Secrets
	// through the operator.
	// +optional
	PullSecretRef *LocalSecretReference `json:"pullSecretRef,omitempty"`
	// PlainHTTP talks HTTP instead of HTTPS to the registry; meant for
	// loopback and in-cluster test registries.
	// +optional
	PlainHTTP bool `json:"plainHTTP,omitempty"`
}

// LocalSecretReference names a Secret in SystemNamespace.
type LocalSecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// LayoutSource is an artifact in an OCI image-layout directory.
type LayoutSource struct {
	// Path is the absolute path of the layout directory (the one holding
	// oci-layout and index.json) on the operator's file system.
	// +kubebuilder:validation:Pattern=`^/`
	Path string `json:"path"`
	// Tag names the manifest in the layout's index.json
	// (org.opencontainers.image.ref.name).
	// +kubebuilder:validation:MinLength=1
	Tag string `json:"tag"`
}

// PackageSourceStatus is what the operator observed: the conditions, the
// revision it serves, and the catalog metadata read from that revision's
// config blob.
type PackageSourceStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (True with ArtifactReady; False with PullFailed,
	// DigestMismatch, InvalidArtifact, UnsafeArchive, RequirementsNotMet,
	// Conflict or KindInUse and a message naming the fix), Reconciling, Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Artifact is the last good revision: pulled, verified, unpacked and
	// served. It stays set (and served) when a later pull fails.
	// +optional
	Artifact *ArtifactStatus `json:"artifact,omitempty"`
	// Catalog is the catalog metadata of Artifact.
	// +optional
	Catalog *CatalogInfo `json:"catalog,omitempty"`
	// Libraries are the library charts vendored into the artifact's charts.
	// +optional
	// +listType=map
	// +listMapKey=name
	Libraries []PackageLibrary `json:"libraries,omitempty"`
	// Variants of Artifact, each a set of components a Package can install.
	// +optional
	// +listType=map
	// +listMapKey=name
	Variants []PackageVariant `json:"variants,omitempty"`
	// Applications of Artifact: the charts published for
	// ApplicationDefinitions, never installed by a Package.
	// +optional
	// +listType=map
	// +listMapKey=name
	Applications []PackageApplication `json:"applications,omitempty"`
}

// ArtifactStatus identifies one pulled revision.
type ArtifactStatus struct {
	// Reference the revision was resolved from: "<repository>:<tag>",
	// "<repository>@<digest>" or "<layout path>:<tag>".
	Reference string `json:"reference"`
	// Digest of the manifest ("sha256:…").
	Digest string `json:"digest"`
	// Revision is "<catalog version>@<digest>", the form Flux uses.
	Revision string `json:"revision"`
	// Charts are the chart layers, one per chart path.
	// +optional
	// +listType=map
	// +listMapKey=path
	Charts []ChartArtifact `json:"charts,omitempty"`
	// LastUpdateTime is when this revision became the served one.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitzero"`
}

// ChartArtifact is one chart layer of an artifact.
type ChartArtifact struct {
	// Path is the layer's org.opencontainers.image.title, the chart path
	// components and applications refer to.
	Path string `json:"path"`
	// Name and Version are the chart's, from its Chart.yaml.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Digest of the chart archive ("sha256:…").
	Digest string `json:"digest"`
	// Size of the chart archive in bytes.
	Size int64 `json:"size"`
}

// CatalogInfo is a catalog's own metadata, written by its author in
// catalog.yaml and shipped in the artifact's config blob. Its rules are
// checked by cozystack.io/contracts/artifact (Catalog.Validate).
type CatalogInfo struct {
	// Name of the catalog, a DNS subdomain, e.g. "services". Other
	// catalogs' variants name it in dependsOn.
	Name string `json:"name"`
	// Version of the catalog, SemVer 2.0 without a leading "v".
	Version string `json:"version"`
	// Description is one line for people browsing catalogs.
	// +optional
	Description string `json:"description,omitempty"`
	// MinPlatformVersion is the oldest platform release (SemVer) whose
	// contracts the catalog works with; an older platform refuses it with
	// RequirementsNotMet.
	MinPlatformVersion string `json:"minPlatformVersion"`
	// RequiredProperties are the K3 properties the platform must advertise,
	// e.g. "network.stableVMAddress"; a missing one is RequirementsNotMet.
	// +optional
	// +listType=set
	RequiredProperties []string `json:"requiredProperties,omitempty"`
	// Provides is what the catalog adds to the platform.
	// +optional
	Provides CatalogProvides `json:"provides,omitzero"`
}

// CatalogProvides lists the kinds a catalog adds.
type CatalogProvides struct {
	// ApplicationKinds are the apps.cozystack.io kinds its
	// ApplicationDefinitions serve, e.g. "Postgres" (K1).
	// +optional
	// +listType=set
	ApplicationKinds []string `json:"applicationKinds,omitempty"`
	// BackupStrategyKinds are the backup strategy kinds its drivers handle.
	// +optional
	// +listType=set
	BackupStrategyKinds []string `json:"backupStrategyKinds,omitempty"`
	// APIGroups are the API groups of the CRDs the catalog ships (DNS
	// subdomains, e.g. "postgresql.cnpg.io"): each CRD of its charts is of
	// one of them, and a group belongs to the catalog that ships it first
	// (contracts/artifact/README.md, "CRD groups").
	// +optional
	// +listType=set
	APIGroups []string `json:"apiGroups,omitempty"`
	// SharedAPIGroups, a subset of APIGroups, are the groups catalogs that
	// depend on this one (a variant's dependsOn names it) may name in
	// their rules and tenantRoles.
	// +optional
	// +listType=set
	SharedAPIGroups []string `json:"sharedAPIGroups,omitempty"`
}

// PackageLibrary is a Helm library chart of the catalog. At build time it
// is vendored into every chart that depends on it through a file://
// repository, so each chart archive is complete on its own.
type PackageLibrary struct {
	// Name and Version are the library's, from its Chart.yaml (filled in by
	// the build).
	Name    string `json:"name"`
	Version string `json:"version"`
	// Path is the library's directory relative to the catalog directory.
	Path string `json:"path"`
}

// PackageVariant is one way to install the catalog: a named set of
// components. A Package chooses one.
type PackageVariant struct {
	// Name of the variant, a DNS label, e.g. "default".
	Name string `json:"name"`
	// Description is one line for people choosing a variant.
	// +optional
	Description string `json:"description,omitempty"`
	// DependsOn names other catalogs (their catalog name) that must be
	// installed and Ready before any component of this variant installs.
	// +optional
	// +listType=set
	DependsOn []string `json:"dependsOn,omitempty"`
	// Components are the charts this variant installs, one HelmRelease
	// each.
	// +listType=map
	// +listMapKey=name
	Components []PackageComponent `json:"components"`
}

// PackageApplication is an application chart of a catalog (postgres,
// redis, ...): the operator publishes it as an ExternalArtifact, like a
// component's chart, for the ApplicationDefinitions whose release.source
// and release.component name it; the application API then installs it
// once per object, in the tenant's namespace. A Package never installs it:
// it has no namespace, dependencies or values of its own. Its rights are
// declared here (Rules, TenantRoles) and granted in every tenant namespace
// (contract K5, k5-cozy-lib.md, "Tenant roles").
type PackageApplication struct {
	// Name of the application, a DNS label unique among the catalog's
	// applications and distinct from every component name: the component
	// of its ExternalArtifact's name, ComponentArtifactName(source, name),
	// which an ApplicationDefinition gives as release.component.
	Name string `json:"name"`
	// Chart is the chart's path in the artifact (the title of its layer),
	// e.g. "charts/postgres".
	Chart string `json:"chart"`
	// Kind is the apps.cozystack.io kind whose ApplicationDefinition
	// installs the chart, e.g. "Postgres"; one of
	// provides.applicationKinds.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Rules are what the chart may read and write in the tenant namespace
	// it is installed in: the catalog's installer ServiceAccount there
	// (CatalogInstallerServiceAccount) holds the rules of the catalog's
	// applications, and helm-controller installs each of their releases
	// as it. Namespaced resources only; wildcards, RBAC, Namespaces,
	// quotas, tokens and the platform's and Flux's API groups are refused
	// (artifact.CheckApplicationRules).
	// +optional
	Rules []rbacv1.PolicyRule `json:"rules,omitempty"`
	// TenantRoles are the rights tenant users get on the application's
	// kind and the objects it makes, by access level; each level also
	// holds the levels below it. Rules on apps.cozystack.io may name only
	// the catalog's own plurals (artifact.CheckTenantRoleRules).
	// +optional
	TenantRoles *TenantRoles `json:"tenantRoles,omitempty"`
}

// TenantRoles are policy rules by tenant access level (contract K5,
// k5-cozy-lib.md, "Tenant roles"): the operator writes each non-empty list
// into a ClusterRole labelled for aggregation into the platform's role of
// that level (TenantRoleAggregationLabel), which every tenant namespace
// binds to the groups "<tenant namespace>-<level>" of the tenant and its
// ancestors.
type TenantRoles struct {
	// View is what every user of the tenant may do: read.
	// +optional
	View []rbacv1.PolicyRule `json:"view,omitempty"`
	// Use adds what users of the applications need (consoles, ports).
	// +optional
	Use []rbacv1.PolicyRule `json:"use,omitempty"`
	// Admin adds creating, changing and deleting applications.
	// +optional
	Admin []rbacv1.PolicyRule `json:"admin,omitempty"`
	// SuperAdmin adds what only the tenant's owners may do.
	// +optional
	SuperAdmin []rbacv1.PolicyRule `json:"superAdmin,omitempty"`
}

// Levels returns the rules by level name ("view", "use", "admin",
// "super-admin"), in increasing order of rights.
func (r *TenantRoles) Levels() []TenantLevelRules {
	if r == nil {
		return nil
	}
	return []TenantLevelRules{
		{TenantLevelView, r.View}, {TenantLevelUse, r.Use},
		{TenantLevelAdmin, r.Admin}, {TenantLevelSuperAdmin, r.SuperAdmin},
	}
}

// TenantLevelRules is the rules of one tenant access level.
// +kubebuilder:object:generate=false
type TenantLevelRules struct {
	Level string
	Rules []rbacv1.PolicyRule
}

// PackageComponent is one chart installed as one HelmRelease.
type PackageComponent struct {
	// Name of the component, a DNS label unique in its variant.
	Name string `json:"name"`
	// Chart is the chart's path in the artifact: the title of its layer,
	// which is the chart directory relative to the catalog directory, e.g.
	// "charts/postgres-operator".
	Chart string `json:"chart"`
	// Namespace the component installs into.
	Namespace string `json:"namespace"`
	// DependsOn names components of the same variant that must be Ready
	// first; no cycles.
	// +optional
	// +listType=set
	DependsOn []string `json:"dependsOn,omitempty"`
	// Privileged marks a component that needs cluster-wide rights
	// (clusterRules). A Package installs it only with allowPrivileged.
	// +optional
	Privileged bool `json:"privileged,omitempty"`
	// Rules are what the component's chart needs in its own namespace; the
	// Package's ServiceAccount gets exactly these through a Role there (plus
	// what Helm needs to store the release).
	// +optional
	Rules []rbacv1.PolicyRule `json:"rules,omitempty"`
	// ClusterRules are the cluster-wide rights the chart needs (CRDs,
	// ClusterRoles, Namespaces, webhooks), granted through a ClusterRole.
	// Only a privileged component may have them.
	// +optional
	ClusterRules []rbacv1.PolicyRule `json:"clusterRules,omitempty"`
	// ConversionWebhooks names the CRDs (by metadata.name, e.g.
	// "widgets.example.org") of the catalog's own groups whose
	// spec.conversion the component may set to a webhook, which then
	// reads every object of the kind. Only a privileged component may have
	// them; they are part of its consent (PrivilegedComponent).
	// +optional
	// +listType=set
	ConversionWebhooks []string `json:"conversionWebhooks,omitempty"`
	// Values are the catalog's defaults for the chart: chart defaults <
	// these < cluster values (K2) < the Package's values. A JSON object.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Values *apiextensionsv1.JSON `json:"values,omitempty"`
	// BackupStrategyKinds are the backup strategy kinds the component's
	// backup driver serves (it registers a BackupDriver for them, contract
	// K7); each is one of provides.backupStrategyKinds.
	// +optional
	// +listType=set
	BackupStrategyKinds []string `json:"backupStrategyKinds,omitempty"`
}

// PackageSourceList is a list of PackageSources.
//
// +kubebuilder:object:root=true
type PackageSourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PackageSource `json:"items"`
}
