package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// BackupJob is one backup run of one application. A Plan creates them on
// its schedule; a tenant may create one by hand. The core binds it to a
// driver (status.binding, condition DriverBound), the driver claims and
// runs it, and on success creates a Backup named in status.backupName.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=cozystack
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.applicationRef.kind`
// +kubebuilder:printcolumn:name="Application",type=string,JSONPath=`.spec.applicationRef.name`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Driver",type=string,JSONPath=`.status.binding.driverRef.name`
// +kubebuilder:printcolumn:name="Bound",type=string,JSONPath=`.status.conditions[?(@.type=="DriverBound")].reason`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress.message`,priority=1
// +kubebuilder:printcolumn:name="Backup",type=string,JSONPath=`.status.backupName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BackupJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BackupJobSpec   `json:"spec"`
	Status BackupJobStatus `json:"status,omitempty"`
}

// BackupJobSpec is the spec of a BackupJob.
//
// +kubebuilder:validation:XValidation:rule="self.applicationRef == oldSelf.applicationRef && self.backupClassName == oldSelf.backupClassName",message="applicationRef and backupClassName are immutable"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.cancel) || !oldSelf.cancel || (has(self.cancel) && self.cancel)",message="a cancelled job cannot be resumed"
type BackupJobSpec struct {
	// ApplicationRef is the application to back up, in the job's
	// namespace.
	ApplicationRef ApplicationRef `json:"applicationRef"`
	// BackupClassName is the BackupClass giving the strategy.
	// +kubebuilder:validation:MinLength=1
	BackupClassName string `json:"backupClassName"`
	// Cancel asks the driver to stop the run and remove what it created
	// on the backend; the job ends Cancelled. It cannot be unset.
	// +optional
	Cancel bool `json:"cancel,omitempty"`
}

// BackupJobStatus is the status of a BackupJob.
type BackupJobStatus struct {
	JobStatus `json:",inline"`
	// BackupName is the Backup the driver created on success.
	// +optional
	BackupName string `json:"backupName,omitempty"`
	// PlanUID is the UID of the Plan that created the job, written by the
	// core (field manager PlanFieldManager) right after it created it; a
	// job made by hand has none, whatever its labels and ownerReferences
	// say (a tenant may write those, never a status). The driver copies it
	// to the Backup's label LabelPlanUID, the only thing a Plan's
	// retention counts (contract k7, "Retention").
	// +optional
	PlanUID types.UID `json:"planUID,omitempty"`
	// ApplicationSnapshotRef refers to the application's spec when the
	// job was bound (core); the driver copies it into the Backup for a
	// restore to a new application. Read the values with
	// cozystack.io/sdk/backup/snapshot.
	// +optional
	ApplicationSnapshotRef *SnapshotRef `json:"applicationSnapshotRef,omitempty"`
	// ApplicationSnapshot is the application's spec inline, as written by
	// releases before ApplicationSnapshotRef.
	//
	// Deprecated: no longer written (a copy per job grew etcd by the
	// application's size each time); read through
	// cozystack.io/sdk/backup/snapshot, which falls back to it for jobs an
	// earlier release bound.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	ApplicationSnapshot *RawSpec `json:"applicationSnapshot,omitempty"`
}

// +kubebuilder:object:root=true

// BackupJobList is a list of BackupJobs.
type BackupJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BackupJob `json:"items"`
}
