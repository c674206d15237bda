package v1alpha1

// LabelManagedBy is Kubernetes' recommended label naming the component that
// manages an object. Each platform component marks what it writes with its
// own value and watches only those objects.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByController marks the objects cozystack-controller writes
	// (the K2 projection).
	ManagedByController = "cozystack-controller"
	// ManagedByOperator marks every object cozystack-operator creates.
	ManagedByOperator = "cozystack-operator"
)

// The field managers (metadata.managedFields) of the platform's two
// controller processes: every server-side apply and named patch of
// cozystack-controller (tenantaccess, backupaccess, tenantrbac, the K2
// projection's ClusterValues status) and of cozystack-operator (the AD
// installer, the Package, PackageSource and ExternalArtifact status) is
// made as one of them. They spell like the ManagedBy label values but do
// another job: the label selects what to look at, the field manager is
// what an apply owns (tenantrbac deletes only what it applied as
// FieldManagerController). Writers with an identity of their own declare
// it where they write: cozystack-api's (platform/internal/registry/application,
// FieldManager and SettingsFieldManager), the tenant quota tree's
// (platform/internal/controller/tenantquota), the backup core's and
// drivers' (cozystack.io/sdk/backup/api/v1alpha1, contract K7 "Field
// managers"). The values are on live objects: they never change.
const (
	FieldManagerController = "cozystack-controller"
	FieldManagerOperator   = "cozystack-operator"
)

// Labels cozystack-api sets on the HelmRelease of every application
// (contract K1, schemas/v1alpha1/k1-application.md): the application's
// kind, its API group and its name. The storage selects a kind's
// applications by LabelApplicationKind; cozystack-operator reads them to
// count the applications of a kind (KindInUse) and to name, in a Conflict,
// the application whose release is in a component's way.
const (
	LabelApplicationKind  = "apps.cozystack.io/application.kind"
	LabelApplicationGroup = "apps.cozystack.io/application.group"
	LabelApplicationName  = "apps.cozystack.io/application.name"
)

// ReasonWaitingForClusterValues is the reason of an application's Ready
// condition while its namespace has no cluster values (contract K2): the
// HelmRelease waits, since its valuesFrom is not optional, instead of
// rendering with empty values.
const ReasonWaitingForClusterValues = "WaitingForClusterValues"

// HelmReasonValuesError is helm-controller's (v1.4) Ready reason when a
// HelmRelease's valuesFrom reference cannot be read: cozystack-api reports
// it as ReasonWaitingForClusterValues for the K2 object, and
// cozystack-operator counts it as a transient state of a component.
const HelmReasonValuesError = "ValuesError"
