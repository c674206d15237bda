package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Default timeouts of a BackupClass, used when a field is unset; every
// timeout is at most MaxTimeout.
const (
	DefaultPendingTimeout    = "10m"
	DefaultRunTimeout        = "6h"
	DefaultStallTimeout      = "15m"
	DefaultDriverWaitTimeout = "1h"
	MaxTimeout               = "168h"
)

// LabelClassNamespace on a BackupClass is the namespace of the
// ServiceAccount that last wrote it (a catalog component's installer
// lives in the component's namespace): the platform's admission policy
// backupclass-owner.cozystack.io sets it on every write by a
// ServiceAccount, whatever the writer sent (platform/tenantaccess,
// backupclass-policy.yaml). A class a person wrote keeps the value that person
// gave. The Job driver projects parameters.secrets only from this
// namespace (contract k7, "Tenant isolation").
const LabelClassNamespace = "backups.cozystack.io/class-namespace"

// ReservedClassNames are the BackupClass names only the cluster operator
// and the platform may write (contract k7, "Kinds"): "default", the class docs/operator/backups.md's
// "Backups" has tenants name, and "job", the built-in driver's name. The policy backupclass-reserved-names.cozystack.io
// refuses them to every other ServiceAccount.
var ReservedClassNames = []string{"default", "job"}

// BackupClass says how each application kind is backed up: per kind
// {apiGroup, kind}, a strategy (a strategy kind served by a driver, and
// its parameters), and the bounds of every job. Cluster-scoped; written by
// the cluster operator or a catalog.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=cozystack
// +kubebuilder:printcolumn:name="Kinds",type=string,JSONPath=`.spec.strategies[*].kind`
// +kubebuilder:printcolumn:name="Strategies",type=string,JSONPath=`.spec.strategies[*].strategy.kind`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BackupClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BackupClassSpec `json:"spec"`
}

// BackupClassSpec is the spec of a BackupClass.
type BackupClassSpec struct {
	// Strategies, one per application kind.
	// +listType=map
	// +listMapKey=apiGroup
	// +listMapKey=kind
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	Strategies []ClassStrategy `json:"strategies"`
	// PendingTimeout bounds the time from binding to the driver's first
	// claim (reason PendingTimeout).
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('168h')",message="must be more than 0s and at most 168h"
	// +optional
	PendingTimeout *metav1.Duration `json:"pendingTimeout,omitempty"`
	// RunTimeout bounds a run from the driver's first claim (reason
	// DeadlineExceeded).
	// +kubebuilder:default="6h"
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('168h')",message="must be more than 0s and at most 168h"
	// +optional
	RunTimeout *metav1.Duration `json:"runTimeout,omitempty"`
	// StallTimeout is the longest time without progress before the core
	// sets Stalled=True, reason NoProgress.
	// +kubebuilder:default="15m"
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('168h')",message="must be more than 0s and at most 168h"
	// +optional
	StallTimeout *metav1.Duration `json:"stallTimeout,omitempty"`
	// DriverWaitTimeout bounds the wait for a driver (reason
	// DriverWaitTimeout).
	// +kubebuilder:default="1h"
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('168h')",message="must be more than 0s and at most 168h"
	// +optional
	DriverWaitTimeout *metav1.Duration `json:"driverWaitTimeout,omitempty"`
}

// ClassStrategy is the strategy of one application kind.
type ClassStrategy struct {
	ApplicationKind `json:",inline"`
	// Strategy for this kind.
	Strategy Strategy `json:"strategy"`
}

// StrategyFor returns the strategy of the kind {apiGroup, kind}, and
// whether the class has one.
func (c *BackupClass) StrategyFor(k ApplicationKind) (Strategy, bool) {
	for _, s := range c.Spec.Strategies {
		if s.ApplicationKind == k {
			return s.Strategy, true
		}
	}
	return Strategy{}, false
}

// Timeouts returns the class's timeouts with the defaults filled in.
func (c *BackupClass) Timeouts() Timeouts {
	pick := func(d *metav1.Duration, def string) *metav1.Duration {
		if d != nil && d.Duration > 0 {
			return d.DeepCopy()
		}
		return mustDuration(def)
	}
	return Timeouts{
		Pending:    pick(c.Spec.PendingTimeout, DefaultPendingTimeout),
		Run:        pick(c.Spec.RunTimeout, DefaultRunTimeout),
		Stall:      pick(c.Spec.StallTimeout, DefaultStallTimeout),
		DriverWait: pick(c.Spec.DriverWaitTimeout, DefaultDriverWaitTimeout),
	}
}

// +kubebuilder:object:root=true

// BackupClassList is a list of BackupClasses.
type BackupClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BackupClass `json:"items"`
}
