package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Capability is an optional feature a driver offers.
// +kubebuilder:validation:Enum=Reclaim;Verify;PointInTime;RestoreToNew
type Capability string

// The capabilities.
const (
	// CapabilityReclaim: the driver deletes a Backup's backend data when
	// the Backup is deleted. Without it retention never deletes the
	// driver's Backups (Plan condition Retention, reason
	// ReclaimUnsupported).
	CapabilityReclaim Capability = "Reclaim"
	// CapabilityVerify: the driver can check a Backup is restorable.
	CapabilityVerify Capability = "Verify"
	// CapabilityPointInTime: the driver can restore to a point in time.
	CapabilityPointInTime Capability = "PointInTime"
	// CapabilityRestoreToNew: the driver can restore into a new
	// application (RestoreJob mode NewApplication).
	CapabilityRestoreToNew Capability = "RestoreToNew"
)

// BackupDriver is the registration of a running driver: the strategy
// kinds it serves, the protocol versions it speaks, its capabilities, and
// the Lease it renews while it runs. The core binds a job to the one live
// registration serving the job's strategy kind (contract k7, "Binding").
// Cluster-scoped; written by the driver itself (sdk/backup/driver). The
// platform binds only to an accepted one (condition Accepted, contract k7,
// "Registration"): its kinds are declared by the catalog component whose
// namespace its writer's ServiceAccount is in, its Lease is its own, and
// status.catalog, not spec.catalog, says which catalog ships it.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=cozystack
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Strategies",type=string,JSONPath=`.spec.strategyKinds`
// +kubebuilder:printcolumn:name="Protocols",type=string,JSONPath=`.spec.protocolVersions`
// +kubebuilder:printcolumn:name="Capabilities",type=string,JSONPath=`.spec.capabilities`,priority=1
// +kubebuilder:printcolumn:name="Catalog",type=string,JSONPath=`.status.catalog`,priority=1
// +kubebuilder:printcolumn:name="Accepted",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="a BackupDriver's name is at most 63 characters: jobs carry it as a label value"
type BackupDriver struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BackupDriverSpec   `json:"spec"`
	Status BackupDriverStatus `json:"status,omitempty"`
}

// BackupDriverSpec is the spec of a BackupDriver.
type BackupDriverSpec struct {
	// StrategyKinds the driver serves.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +listType=set
	// +kubebuilder:validation:items:Pattern=`^[A-Z][A-Za-z0-9]{0,62}$`
	StrategyKinds []string `json:"strategyKinds"`
	// ProtocolVersions the driver speaks, e.g. [v1alpha1].
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	ProtocolVersions []string `json:"protocolVersions"`
	// Capabilities the driver offers.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	Capabilities []Capability `json:"capabilities,omitempty"`
	// Catalog that ships the driver, and its version, for messages; empty
	// for the platform's own. The platform does not trust it: a
	// registration whose catalog differs from the one the platform finds
	// (status.catalog) is refused (reason CatalogMismatch).
	// +optional
	Catalog string `json:"catalog,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// Lease the driver renews while it runs (coordination.k8s.io/v1). The
	// registration is live while the Lease's renewTime is within its
	// leaseDurationSeconds. It is the driver's own: named
	// "backup-driver-<name>", labelled backups.cozystack.io/driver=<name>,
	// and, for a catalog's driver, in its ServiceAccount's namespace
	// (else reason LeaseNotOwned).
	Lease LeaseRef `json:"lease"`
}

// LeaseRef names a Lease.
type LeaseRef struct {
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// Has reports whether d offers c.
func (d *BackupDriver) Has(c Capability) bool {
	for _, x := range d.Spec.Capabilities {
		if x == c {
			return true
		}
	}
	return false
}

// Serves reports whether d serves strategy kind k.
func (d *BackupDriver) Serves(k string) bool {
	for _, x := range d.Spec.StrategyKinds {
		if x == k {
			return true
		}
	}
	return false
}

// BackupDriverStatus is the status of a BackupDriver, written by the
// platform only.
type BackupDriverStatus struct {
	// Conditions: Accepted (True with reason Accepted; False with
	// WriterUnknown, WriterNotInCatalog, KindNotDeclared, CatalogMismatch,
	// LeaseNotOwned or ReservedForPlatform, and a message naming the rule,
	// the owner and the fix).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Catalog, Package and Component are what the platform found ships
	// the driver: the Package owning the namespace of the registration's
	// writer, its catalog (the PackageSource's status.catalog.name) and
	// the component installed in that namespace. Empty for a driver
	// registered by the platform or a cluster operator.
	// +optional
	Catalog string `json:"catalog,omitempty"`
	// +optional
	Package string `json:"package,omitempty"`
	// +optional
	Component string `json:"component,omitempty"`
}

// +kubebuilder:object:root=true

// BackupDriverList is a list of BackupDrivers.
type BackupDriverList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BackupDriver `json:"items"`
}
