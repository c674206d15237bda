package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what a Plan does when its schedule comes due while
// a job it started is still running.
// +kubebuilder:validation:Enum=Forbid;Allow;Replace
type ConcurrencyPolicy string

// The concurrency policies, as batch/v1 CronJob's.
const (
	// ForbidConcurrent skips the new run (lastSkipped reason
	// ConcurrencyForbidden) while a job is active.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// AllowConcurrent starts the new run beside the active ones.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ReplaceConcurrent cancels the active jobs (spec.cancel) and starts
	// the new run.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// Plan backs up one application on a schedule and keeps the Backups its
// retention policy asks for. Namespaced: a Plan, its application, its
// BackupJobs and its Backups share a namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=cozystack
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.applicationRef.kind`
// +kubebuilder:printcolumn:name="Application",type=string,JSONPath=`.spec.applicationRef.name`
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule.cron`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Last",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextScheduleTime`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Plan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PlanSpec   `json:"spec"`
	Status PlanStatus `json:"status,omitempty"`
}

// PlanSpec is the spec of a Plan.
type PlanSpec struct {
	// ApplicationRef is the application to back up, in the Plan's
	// namespace.
	ApplicationRef ApplicationRef `json:"applicationRef"`
	// BackupClassName is the BackupClass giving the strategy.
	// +kubebuilder:validation:MinLength=1
	BackupClassName string `json:"backupClassName"`
	// Schedule of the runs.
	Schedule Schedule `json:"schedule"`
	// Suspend stops new runs; active jobs go on.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// StartingDeadlineSeconds: a run not started within this many seconds
	// of its scheduled time is skipped (lastSkipped reason
	// MissedSchedule), however many were missed: one record, no burst.
	// +kubebuilder:default=300
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
	// ConcurrencyPolicy when a run comes due while a job is active.
	// +kubebuilder:default=Forbid
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	// Retention of this Plan's Backups; none keeps every Backup.
	// +optional
	Retention *Retention `json:"retention,omitempty"`
}

// Schedule is a cron schedule in a time zone.
type Schedule struct {
	// Cron is a standard five-field cron expression ("0 3 * * *"), or a
	// descriptor such as "@daily".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Cron string `json:"cron"`
	// TimeZone is an IANA time zone name; default UTC.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
}

// Retention says which of a Plan's successful Backups to keep, in the
// manner of restic's forget: a Backup is kept when any rule keeps it.
// KeepLast keeps the newest n; KeepDaily, KeepWeekly and KeepMonthly keep
// the newest Backup of each of the last n days, ISO weeks and months that
// have one (in the schedule's time zone); MaxAge deletes what is older
// unless another rule keeps it; MinKeep keeps the newest n whatever the
// other rules say.
type Retention struct {
	// +kubebuilder:validation:Minimum=0
	// +optional
	KeepLast *int32 `json:"keepLast,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	KeepDaily *int32 `json:"keepDaily,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	KeepWeekly *int32 `json:"keepWeekly,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	KeepMonthly *int32 `json:"keepMonthly,omitempty"`
	// MaxAge, a Go duration ("720h").
	// +optional
	MaxAge *metav1.Duration `json:"maxAge,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	MinKeep *int32 `json:"minKeep,omitempty"`
}

// SkippedRun records a scheduled run that did not start.
type SkippedRun struct {
	// Time the run was scheduled for.
	Time metav1.Time `json:"time"`
	// Reason: MissedSchedule, ConcurrencyForbidden, Suspended.
	Reason string `json:"reason"`
	// Message for a person.
	// +optional
	Message string `json:"message,omitempty"`
}

// PlanStatus is the status of a Plan, written by the core.
type PlanStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// LastScheduleTime is the scheduled time of the last run started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// NextScheduleTime is the next scheduled time.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`
	// LastSuccessfulTime is the completion time of the last successful
	// job.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`
	// LastSkipped is the last run that did not start, and why.
	// +optional
	LastSkipped *SkippedRun `json:"lastSkipped,omitempty"`
	// Active lists the names of this Plan's BackupJobs not yet terminal.
	// +optional
	// +listType=set
	Active []string `json:"active,omitempty"`
	// Conditions: Ready, Reconciling, Stalled, and Retention (reason
	// ReclaimUnsupported when a Backup due for deletion cannot be, its
	// driver lacking the Reclaim capability).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// PlanList is a list of Plans.
type PlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Plan `json:"items"`
}
