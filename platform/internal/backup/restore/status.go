package restore

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// intent is what the core says of a job after one reconcile: its whole
// share of the status (contract k7, "Field managers"), applied at once.
type intent struct {
	// authorized is the Authorized condition; nil before it is decided.
	authorized *verdict
	// bound is the DriverBound condition; nil before the driver is looked at.
	bound *verdict
	// blocked is why the job waits (Ready=False, phase Pending); nil when
	// it does not.
	blocked *verdict
	// failure ends the job: Ready=False with its reason, phase Failed
	// (Cancelled when cancelled).
	failure   *verdict
	cancelled bool
	// targetRef is the application restored into, once known.
	targetRef *backupsv1alpha1.ApplicationRef
	// targetUID is the UID of the application the core created, once it
	// exists (status.targetUID).
	targetUID types.UID
	// binding, once written, is resent on every apply.
	binding *backupsv1alpha1.Binding
}

// summarize returns the status the core applies for job: phase Pending (Failed
// or Cancelled, with completionTime, when it ends), the conditions of in with their
// lastTransitionTime kept from job's while their status holds, and
// observedGeneration. Ready is sent only while the job waits or when it
// fails: from binding on, Ready is the driver's.
func summarize(job *backupsv1alpha1.RestoreJob, in intent, now time.Time) backupsv1alpha1.RestoreJobStatus {
	st := backupsv1alpha1.RestoreJobStatus{TargetRef: in.targetRef, TargetUID: in.targetUID}
	if st.TargetUID == "" {
		st.TargetUID = job.Status.TargetUID
	}
	st.ObservedGeneration = job.Generation
	st.Phase = backupsv1alpha1.PhasePending
	st.Binding = in.binding
	if st.Binding == nil {
		st.Binding = job.Status.Binding
	}
	var ready *verdict
	switch {
	case in.failure != nil:
		st.Phase = backupsv1alpha1.PhaseFailed
		if in.cancelled {
			st.Phase = backupsv1alpha1.PhaseCancelled
		}
		t := metav1.NewTime(now)
		st.CompletionTime = &t
		ready = in.failure
	case in.blocked != nil:
		ready = in.blocked
	}
	var want []metav1.Condition
	for _, c := range []struct {
		typ string
		v   *verdict
	}{
		{typ: backupsv1alpha1.ConditionAuthorized, v: in.authorized},
		{typ: backupsv1alpha1.ConditionDriverBound, v: in.bound},
		{typ: backupsv1alpha1.ConditionReady, v: ready},
	} {
		if c.v != nil {
			want = append(want, apply.Condition(c.typ, c.v.status, c.v.reason, job.Generation, "%s", c.v.message))
		}
	}
	st.Conditions = apply.Conditions(job.Status.Conditions, now, want...)
	return st
}

// waitingSince is when job began waiting for its driver: the
// lastTransitionTime of its DriverBound=False condition, or now.
func waitingSince(job *backupsv1alpha1.RestoreJob, now time.Time) time.Time {
	if c := apimeta.FindStatusCondition(job.Status.Conditions, backupsv1alpha1.ConditionDriverBound); c != nil && c.Status == metav1.ConditionFalse {
		return c.LastTransitionTime.Time
	}
	return now
}
