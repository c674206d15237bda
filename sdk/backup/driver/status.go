package driver

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// intent is the driver's whole intent for a job's status: the fields the
// driver's field manager owns, sent in full on every write because a field
// a server-side apply leaves out is removed (sdk/backup/apply). It never
// holds status.binding or the conditions DriverBound and Stalled (the
// core's).
type intent struct {
	Phase          v1alpha1.JobPhase  `json:"phase,omitempty"`
	Claim          *v1alpha1.Claim    `json:"claim,omitempty"`
	Progress       *v1alpha1.Progress `json:"progress,omitempty"`
	StartTime      *metav1.Time       `json:"startTime,omitempty"`
	CompletionTime *metav1.Time       `json:"completionTime,omitempty"`
	Conditions     []metav1.Condition `json:"conditions,omitempty"`
	BackupName     string             `json:"backupName,omitempty"`
}

// driverConditions are the condition types a driver owns on a job.
var driverConditions = []string{v1alpha1.ConditionReady, v1alpha1.ConditionReconciling}

// intentOf reads the driver's fields out of a job's status.
func intentOf(st *v1alpha1.JobStatus, backupName string) *intent {
	in := &intent{
		Phase:          st.Phase,
		Claim:          st.Claim.DeepCopy(),
		Progress:       st.Progress.DeepCopy(),
		StartTime:      st.StartTime.DeepCopy(),
		CompletionTime: st.CompletionTime.DeepCopy(),
		BackupName:     backupName,
	}
	in.Conditions = apply.Owned(st.Conditions, driverConditions...)
	return in
}

// running marks the run in progress.
func (in *intent) running(msg string, gen int64) {
	in.Phase = v1alpha1.PhaseRunning
	in.conditions(metav1.ConditionUnknown, metav1.ConditionTrue, v1alpha1.ReasonProgressing, msg, gen)
}

// end marks the run terminal with phase, Ready status and reason.
func (in *intent) end(phase v1alpha1.JobPhase, ready metav1.ConditionStatus, reason, msg string, now metav1.Time, gen int64) {
	in.Phase = phase
	in.CompletionTime = &now
	in.conditions(ready, metav1.ConditionFalse, reason, msg, gen)
}

// conditions sets the driver's Ready and Reconciling, each keeping its
// lastTransitionTime while its status stays (apply.Conditions).
func (in *intent) conditions(ready, reconciling metav1.ConditionStatus, reason, msg string, gen int64) {
	msg = cut(msg, 32768)
	in.Conditions = apply.Conditions(in.Conditions, time.Now(),
		apply.Condition(v1alpha1.ConditionReady, ready, reason, gen, "%s", msg),
		apply.Condition(v1alpha1.ConditionReconciling, reconciling, reason, gen, "%s", msg))
}

// applyJobStatus applies in to obj's status subresource as manager, like
// apply.Status, with obj's resourceVersion as a precondition: a claim is
// exclusive only if a replica whose view is stale cannot overwrite a
// claim taken meanwhile (server-side apply with force would). A stale view
// is a 409 Conflict; the caller re-reads. On success obj's resourceVersion
// is the new one.
func applyJobStatus(ctx context.Context, c client.Client, obj client.Object, in *intent, manager string) error {
	return apply.StatusAt(ctx, c, obj, in, manager)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
