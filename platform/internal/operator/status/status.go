// Package status sets the kstatus conditions of PackageSource and Package
// (BRIEF.md section 7; Kubernetes API conventions): Ready is always
// present; Reconciling is present (True) only while the operator is still
// working towards Ready; Stalled is present (True) only when it cannot get
// there without a person changing something. Reasons are CamelCase
// (the constants of cozystack.io/contracts/apis/cozystack/v1alpha1) and
// messages say what to fix.
//
// fluxcd/pkg/runtime's conditions helpers would do this, but its current
// releases need newer k8s.io modules than the platform pins (v0.37.2), so
// this is the part of it the operator needs, on apimachinery's
// meta.SetStatusCondition.
package status

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// State says which of the three kstatus states a result is.
type State int

const (
	// StateReady: Ready=True; Reconciling and Stalled removed.
	StateReady State = iota
	// StateProgressing: Ready=False, Reconciling=True (still working, or
	// retrying a transient failure); Stalled removed.
	StateProgressing
	// StateStalled: Ready=False, Stalled=True; Reconciling removed. The
	// operator still retries on change and at its interval.
	StateStalled
)

// Result is one reconcile's verdict on an object.
type Result struct {
	State State
	// Reason is the CamelCase reason of the Ready condition (and of
	// Reconciling or Stalled).
	Reason string
	// Message says what happened and, when not Ready, what to do.
	Message string
}

// Apply writes r into conds for the object's generation.
func Apply(conds *[]metav1.Condition, generation int64, r Result) {
	set := func(t string, s metav1.ConditionStatus) {
		meta.SetStatusCondition(conds, metav1.Condition{
			Type: t, Status: s, Reason: r.Reason, Message: r.Message, ObservedGeneration: generation,
		})
	}
	switch r.State {
	case StateReady:
		set(v1alpha1.ConditionReady, metav1.ConditionTrue)
		meta.RemoveStatusCondition(conds, v1alpha1.ConditionReconciling)
		meta.RemoveStatusCondition(conds, v1alpha1.ConditionStalled)
	case StateProgressing:
		set(v1alpha1.ConditionReady, metav1.ConditionFalse)
		set(v1alpha1.ConditionReconciling, metav1.ConditionTrue)
		meta.RemoveStatusCondition(conds, v1alpha1.ConditionStalled)
	case StateStalled:
		set(v1alpha1.ConditionReady, metav1.ConditionFalse)
		set(v1alpha1.ConditionStalled, metav1.ConditionTrue)
		meta.RemoveStatusCondition(conds, v1alpha1.ConditionReconciling)
	}
}

// Changed reports whether applying r to conds would change the Ready
// condition's status, reason or message (for deciding to emit an event).
func Changed(conds []metav1.Condition, r Result) bool {
	c := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
	want := metav1.ConditionFalse
	if r.State == StateReady {
		want = metav1.ConditionTrue
	}
	return c == nil || c.Status != want || c.Reason != r.Reason || c.Message != r.Message
}
