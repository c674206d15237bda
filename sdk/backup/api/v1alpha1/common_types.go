package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplicationKind names an application kind, e.g. {apps.cozystack.io,
// Postgres}.
type ApplicationKind struct {
	// APIGroup of the application kind, e.g. apps.cozystack.io.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	APIGroup string `json:"apiGroup"`
	// Kind of the application, e.g. Postgres.
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]{0,62}$`
	Kind string `json:"kind"`
}

// ApplicationRef names one application in the namespace of the object
// holding the reference.
type ApplicationRef struct {
	ApplicationKind `json:",inline"`
	// Name of the application.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// Strategy is how one application kind is backed up: the strategy kind a
// driver serves and that driver's parameters. The core never reads the
// parameters; the driver validates them and refuses unknown keys (reason
// InvalidParameters).
type Strategy struct {
	// Kind is the strategy kind, e.g. Job, CNPG, Velero: a BackupDriver
	// serving it (spec.strategyKinds) runs the jobs.
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]{0,62}$`
	Kind string `json:"kind"`
	// Parameters for the driver, opaque to the core.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Parameters *apiextensionsv1.JSON `json:"parameters,omitempty"`
}

// DriverRef names the BackupDriver a job is bound to.
type DriverRef struct {
	// Name of the BackupDriver.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// ProtocolVersion both sides agreed on when the job was bound.
	// +kubebuilder:validation:MinLength=1
	ProtocolVersion string `json:"protocolVersion"`
}

// Binding is what the core writes, once, when it binds a job: the driver,
// and the strategy resolved from the BackupClass at that moment. Editing or
// deleting the BackupClass afterwards never re-routes the job. The API
// server refuses any change of a binding once written (a CEL transition
// rule), so no job ever moves from one driver to another.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a job's binding is written once and never changes"
type Binding struct {
	DriverRef DriverRef `json:"driverRef"`
	// Strategy is the class's strategy for the application's kind, copied
	// when the job was bound.
	Strategy Strategy `json:"strategy"`
	// BackupClassName the strategy was resolved from.
	BackupClassName string `json:"backupClassName"`
	// Timeouts copied from the class, so a class edit never changes a
	// running job's bounds.
	Timeouts Timeouts `json:"timeouts"`
	// BoundTime is when the core bound the job.
	BoundTime metav1.Time `json:"boundTime"`
}

// Timeouts bound each stage of a job. Durations are Go durations
// ("90s", "15m", "6h").
type Timeouts struct {
	// Pending bounds the time from binding to the driver's first claim;
	// past it the job fails with reason PendingTimeout. Default 10m.
	// +optional
	Pending *metav1.Duration `json:"pending,omitempty"`
	// Run bounds the time from the driver's first claim to the end; past
	// it the job fails with reason DeadlineExceeded. Default 6h.
	// +optional
	Run *metav1.Duration `json:"run,omitempty"`
	// Stall is the longest time without progress reported by the driver;
	// past it the core sets Stalled=True, reason NoProgress. Default 15m.
	// +optional
	Stall *metav1.Duration `json:"stall,omitempty"`
	// DriverWait bounds the time a job waits for a driver (reasons
	// DriverNotInstalled, DriverUnavailable, DriverConflict,
	// ProtocolIncompatible); past it the job fails with reason
	// DriverWaitTimeout. Default 1h.
	// +optional
	DriverWait *metav1.Duration `json:"driverWait,omitempty"`
}

// Claim is the driver's lease on one run, renewed while the run goes on.
// The core marks the job Stalled, reason DriverLost, when RenewTime is
// older than LeaseDurationSeconds; only a replica of the bound driver may
// then take the claim over and resume.
type Claim struct {
	// HolderIdentity is the driver replica holding the run (e.g. its pod
	// name).
	// +kubebuilder:validation:MinLength=1
	HolderIdentity string `json:"holderIdentity"`
	// AcquireTime is when HolderIdentity took the claim.
	AcquireTime metav1.MicroTime `json:"acquireTime"`
	// RenewTime is the holder's last renewal.
	RenewTime metav1.MicroTime `json:"renewTime"`
	// LeaseDurationSeconds is how long the claim holds without renewal.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	LeaseDurationSeconds int32 `json:"leaseDurationSeconds"`
	// Takeovers counts the times a replica resumed the run after its
	// holder was lost.
	// +optional
	Takeovers int32 `json:"takeovers,omitempty"`
}

// Progress is what the driver last reported about a run.
type Progress struct {
	// Time of the last report; the core's stall check reads it.
	Time metav1.Time `json:"time"`
	// Percent done, when the driver knows it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Percent *int32 `json:"percent,omitempty"`
	// Message for a person, e.g. "copied 3 of 7 volumes".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// JobPhase is a job's phase: Pending until the driver claims it, Running,
// then one of the terminal phases Succeeded, Failed, Cancelled.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed;Cancelled
type JobPhase string

// The phases of BackupJob and RestoreJob.
const (
	PhasePending   JobPhase = "Pending"
	PhaseRunning   JobPhase = "Running"
	PhaseSucceeded JobPhase = "Succeeded"
	PhaseFailed    JobPhase = "Failed"
	PhaseCancelled JobPhase = "Cancelled"
)

// Terminal reports whether p is Succeeded, Failed or Cancelled.
func (p JobPhase) Terminal() bool {
	return p == PhaseSucceeded || p == PhaseFailed || p == PhaseCancelled
}

// JobStatus is the status every job kind shares. Fields are written by
// server-side apply, each by one field manager: the core owns Binding,
// the conditions DriverBound and Stalled and, for the failures it
// decides, Phase and Ready; the bound driver owns Claim, Progress and,
// otherwise, Phase and Ready.
//
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.binding) || has(self.binding)",message="a job's binding is never removed"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.phase) || !(oldSelf.phase in ['Succeeded', 'Failed', 'Cancelled']) || (has(self.phase) && self.phase == oldSelf.phase)",message="a job's terminal phase never changes"
type JobStatus struct {
	// ObservedGeneration is the generation the core last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase of the job.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// Binding is written once by the core; see Binding.
	// +optional
	Binding *Binding `json:"binding,omitempty"`
	// Claim is the bound driver's lease on the run.
	// +optional
	Claim *Claim `json:"claim,omitempty"`
	// Progress is the driver's last report.
	// +optional
	Progress *Progress `json:"progress,omitempty"`
	// StartTime is when the driver first claimed the run.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the job reached a terminal phase.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Conditions: DriverBound, Ready, Reconciling, Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
