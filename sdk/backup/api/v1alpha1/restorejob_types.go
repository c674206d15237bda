package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RestoreMode is where a RestoreJob restores to.
// +kubebuilder:validation:Enum=InPlace;NewApplication
type RestoreMode string

// The restore modes.
const (
	// RestoreInPlace restores into the Backup's own application, in the
	// RestoreJob's namespace, which must be the Backup's.
	RestoreInPlace RestoreMode = "InPlace"
	// RestoreNewApplication creates a new application, named
	// target.applicationName in the RestoreJob's namespace, from the spec
	// captured in the Backup, and restores into it. The source is never
	// touched.
	RestoreNewApplication RestoreMode = "NewApplication"
)

// RestoreJob restores one Backup. It lives in the namespace restored
// into; a Backup in another namespace may be read only when a BackupGrant
// in the Backup's namespace allows the RestoreJob's namespace (condition
// Authorized, reason GrantMissing, naming the grant to create).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=cozystack
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Backup",type=string,JSONPath=`.spec.backupRef.name`
// +kubebuilder:printcolumn:name="From",type=string,JSONPath=`.spec.backupRef.namespace`,priority=1
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.target.mode`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.targetRef.name`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RestoreJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RestoreJobSpec   `json:"spec"`
	Status RestoreJobStatus `json:"status,omitempty"`
}

// RestoreJobSpec is the spec of a RestoreJob.
//
// +kubebuilder:validation:XValidation:rule="self.backupRef == oldSelf.backupRef && self.target == oldSelf.target",message="backupRef and target are immutable"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.cancel) || !oldSelf.cancel || (has(self.cancel) && self.cancel)",message="a cancelled job cannot be resumed"
type RestoreJobSpec struct {
	// BackupRef is the Backup to restore.
	BackupRef BackupRef `json:"backupRef"`
	// Target of the restore.
	Target RestoreTarget `json:"target"`
	// Cancel asks the driver to stop; the job ends Cancelled.
	// +optional
	Cancel bool `json:"cancel,omitempty"`
}

// BackupRef names a Backup.
type BackupRef struct {
	// Namespace of the Backup; empty means the RestoreJob's.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the Backup.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// RestoreTarget is where to restore.
//
// +kubebuilder:validation:XValidation:rule="self.mode == 'NewApplication' ? has(self.applicationName) : !has(self.applicationName)",message="applicationName is required with mode NewApplication and refused with InPlace"
type RestoreTarget struct {
	// Mode: InPlace or NewApplication.
	Mode RestoreMode `json:"mode"`
	// ApplicationName of the new application (NewApplication only).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ApplicationName string `json:"applicationName,omitempty"`
}

// RestoreJobStatus is the status of a RestoreJob.
type RestoreJobStatus struct {
	JobStatus `json:",inline"`
	// TargetRef is the application restored into (core), in the
	// RestoreJob's namespace.
	// +optional
	TargetRef *ApplicationRef `json:"targetRef,omitempty"`
	// TargetUID is the UID of the application the core created for this
	// job (mode NewApplication), recorded with the binding. When the job
	// ends Failed or Cancelled, the core deletes the application of this
	// UID (never another of the same name, never one that existed before
	// the job), so a retry can create it again (contract k7, "Restores").
	// +optional
	TargetUID types.UID `json:"targetUID,omitempty"`
}

// +kubebuilder:object:root=true

// RestoreJobList is a list of RestoreJobs.
type RestoreJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RestoreJob `json:"items"`
}

// BackupGrant, in a Backup's namespace, lets RestoreJobs in other
// namespaces read its Backups, in the manner of Gateway API's
// ReferenceGrant: the owner of the source namespace decides, never the
// restoring side.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=cozystack
// +kubebuilder:printcolumn:name="From",type=string,JSONPath=`.spec.from[*].namespace`
// +kubebuilder:printcolumn:name="Backups",type=string,JSONPath=`.spec.backupNames`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BackupGrant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BackupGrantSpec `json:"spec"`
}

// BackupGrantSpec is the spec of a BackupGrant.
type BackupGrantSpec struct {
	// From lists the namespaces whose RestoreJobs may read.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=namespace
	From []GrantFrom `json:"from"`
	// BackupNames limits the grant to these Backups; empty means every
	// Backup of the namespace.
	// +kubebuilder:validation:MaxItems=256
	// +listType=set
	// +optional
	BackupNames []string `json:"backupNames,omitempty"`
}

// GrantFrom is one namespace a BackupGrant admits.
type GrantFrom struct {
	// Namespace of the RestoreJobs admitted.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
}

// Allows reports whether g lets a RestoreJob in namespace from read the
// Backup named backup in g's namespace.
func (g *BackupGrant) Allows(from, backup string) bool {
	ns := false
	for _, f := range g.Spec.From {
		if f.Namespace == from {
			ns = true
		}
	}
	if !ns {
		return false
	}
	if len(g.Spec.BackupNames) == 0 {
		return true
	}
	for _, n := range g.Spec.BackupNames {
		if n == backup {
			return true
		}
	}
	return false
}

// +kubebuilder:object:root=true

// BackupGrantList is a list of BackupGrants.
type BackupGrantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BackupGrant `json:"items"`
}
