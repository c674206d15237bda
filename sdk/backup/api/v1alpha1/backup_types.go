package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Backup is one restorable backup of one application, created by the
// driver that took it. Deleting it asks that driver to reclaim the backend
// data: the driver holds a finalizer on it (BackupFinalizer) while it
// has the Reclaim capability. Tenants may read and delete Backups, never
// create or change them: a Backup's spec says where data is.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=cozystack
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.applicationRef.kind`
// +kubebuilder:printcolumn:name="Application",type=string,JSONPath=`.spec.applicationRef.name`
// +kubebuilder:printcolumn:name="Driver",type=string,JSONPath=`.spec.driverRef.name`
// +kubebuilder:printcolumn:name="Taken",type=date,JSONPath=`.spec.takenAt`
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.spec.planName`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Backup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   BackupSpec   `json:"spec"`
	Status BackupStatus `json:"status,omitempty"`
}

// BackupSpec is the spec of a Backup, written once by its driver.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a Backup's spec is immutable"
type BackupSpec struct {
	// ApplicationRef is the application backed up, in the Backup's
	// namespace.
	ApplicationRef ApplicationRef `json:"applicationRef"`
	// DriverRef is the driver that took it and restores and reclaims it.
	DriverRef DriverRef `json:"driverRef"`
	// Strategy the job ran with.
	Strategy Strategy `json:"strategy"`
	// BackupJobName is the job that took it.
	BackupJobName string `json:"backupJobName"`
	// BackupClassName is the class the job's strategy came from
	// (status.binding.backupClassName of the job); a restore takes its
	// timeouts from it while it exists.
	// +optional
	BackupClassName string `json:"backupClassName,omitempty"`
	// PlanName is the Plan whose retention governs it; empty for a job
	// made by hand.
	// +optional
	PlanName string `json:"planName,omitempty"`
	// TakenAt is when the driver finished taking it.
	TakenAt metav1.Time `json:"takenAt"`
	// ApplicationSnapshotRef refers to the application's spec at backup
	// time, copied from the job's status.applicationSnapshotRef. Read the
	// values with cozystack.io/sdk/backup/snapshot.
	// +optional
	ApplicationSnapshotRef *SnapshotRef `json:"applicationSnapshotRef,omitempty"`
	// ApplicationSnapshot is the application's spec at backup time inline,
	// as written by releases before ApplicationSnapshotRef.
	//
	// Deprecated: no longer written; read through
	// cozystack.io/sdk/backup/snapshot, which falls back to it for Backups
	// an earlier release took.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	ApplicationSnapshot *RawSpec `json:"applicationSnapshot,omitempty"`
	// RestoreOverlay is a JSON merge patch (RFC 7386) the core applies to
	// the application snapshot when it creates a new application from this
	// Backup (RestoreJob mode NewApplication), e.g. values that make the
	// application's chart bootstrap from this backup. Written by the
	// driver with the Backup; the application API validates the result.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	RestoreOverlay *RawSpec `json:"restoreOverlay,omitempty"`
	// DriverData is the driver's locator of the data, opaque to the core.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	DriverData *RawSpec `json:"driverData,omitempty"`
}

// BackupStatus is the status of a Backup.
type BackupStatus struct {
	// Conditions: Ready (the data is restorable), and Reclaim (reason
	// ReclaimFailed while the driver cannot delete the data).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// BackupList is a list of Backups.
type BackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Backup `json:"items"`
}
