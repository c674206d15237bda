package mariadbdriver

import (
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons the mariadb-operator writes, as its
// api/v1alpha1/condition_types.go names them (see doc.go for the source).
const (
	ConditionComplete       = "Complete"
	ConditionReady          = "Ready"
	ConditionBackupRestored = "BackupRestored"

	ReasonJobComplete      = "JobComplete"
	ReasonJobFailed        = "JobFailed"
	ReasonJobRunning       = "JobRunning"
	ReasonJobSuspended     = "JobSuspended"
	ReasonFailed           = "Failed"
	ReasonCronJobScheduled = "CronJobScheduled"
	ReasonCronJobRunning   = "CronJobRunning"
	// ReasonCronJobSuccess is spelled as the operator spells it.
	ReasonCronJobSuccess = "CronJobSucess"
	ReasonRestoreBackup  = "RestoreBackup"
)

// Phase is what an operator state means for a run.
type Phase string

// The phases of a run a state maps to.
const (
	// Running: the operator works; progress is reported.
	Running Phase = "Running"
	// Waiting: the operator has not started, or waits on something it
	// retries; the run fails after the wait timeout (since the state's
	// lastTransitionTime, or the object's creation).
	Waiting Phase = "Waiting"
	// Succeeded ends the run Succeeded.
	Succeeded Phase = "Succeeded"
	// Failed ends the run Failed, BackendFailed.
	Failed Phase = "Failed"
)

// CompleteState is one state of the Complete condition of a
// k8s.mariadb.com Backup or Restore.
type CompleteState struct {
	Status metav1.ConditionStatus
	Reason string
}

// CompleteStates maps every state of the Complete condition the operator
// writes on a Backup or Restore (pkg/condition/complete.go and
// condition.go of mariadb-operator) to a Phase. A state absent from it (a
// newer operator, Status Unknown) is Waiting, so bounded too.
var CompleteStates = map[CompleteState]Phase{
	{metav1.ConditionTrue, ReasonJobComplete}:   Succeeded,
	{metav1.ConditionTrue, ReasonJobFailed}:     Failed,
	{metav1.ConditionFalse, ReasonJobRunning}:   Running,
	{metav1.ConditionFalse, ReasonJobSuspended}: Waiting,
	// "MariaDB not found", "Error getting MariaDB", "MariaDB not ready",
	// "Error creating Job": the operator retries.
	{metav1.ConditionFalse, ReasonFailed}: Waiting,
	// Scheduled Backups (spec.schedule): the driver creates one-off
	// Backups only, so a schedule was added by someone else and no single
	// backup is this run's.
	{metav1.ConditionFalse, ReasonCronJobScheduled}: Failed,
	{metav1.ConditionFalse, ReasonCronJobRunning}:   Failed,
	{metav1.ConditionTrue, ReasonCronJobSuccess}:    Failed,
}

// Verdict is the mapping of one observed object.
type Verdict struct {
	Phase Phase
	// Message for the run's progress or failure.
	Message string
}

// ClassifyComplete maps the conditions of the k8s.mariadb.com object
// described by what (e.g. "Backup ns/x"), created at created, to a
// Verdict at now: a Waiting state older than wait becomes Failed.
func ClassifyComplete(what string, conds []metav1.Condition, created, now time.Time, wait time.Duration) Verdict {
	c := apimeta.FindStatusCondition(conds, ConditionComplete)
	if c == nil {
		return waiting(fmt.Sprintf("%s: waiting for the mariadb-operator to start it (no Complete condition)", what), created, now, wait)
	}
	msg := fmt.Sprintf("%s: Complete=%s %s: %s", what, c.Status, c.Reason, c.Message)
	phase, known := CompleteStates[CompleteState{c.Status, c.Reason}]
	if !known {
		phase = Waiting
		msg += " (a state this driver does not know)"
	}
	switch phase {
	case Waiting:
		return waiting(msg, c.LastTransitionTime.Time, now, wait)
	case Failed:
		return Verdict{Failed, msg + " (see the operator's Job and its pod logs)"}
	}
	return Verdict{phase, msg}
}

// ClassifyRestoredMariaDB maps a MariaDB that bootstraps from a backup
// (spec.bootstrapFrom) to a Verdict: Succeeded once its condition
// BackupRestored is True and Ready is True, Running while the operator
// restores (Ready=False RestoreBackup), Waiting otherwise (bounded by
// wait since the last transition).
func ClassifyRestoredMariaDB(what string, conds []metav1.Condition, created, now time.Time, wait time.Duration) Verdict {
	ready := apimeta.FindStatusCondition(conds, ConditionReady)
	restored := apimeta.FindStatusCondition(conds, ConditionBackupRestored)
	switch {
	case restored != nil && restored.Status == metav1.ConditionTrue && ready != nil && ready.Status == metav1.ConditionTrue:
		return Verdict{Succeeded, fmt.Sprintf("%s: backup restored and Ready (%s)", what, ready.Reason)}
	case ready != nil && ready.Status == metav1.ConditionFalse && ready.Reason == ReasonRestoreBackup,
		restored != nil && restored.Status == metav1.ConditionFalse:
		return Verdict{Running, fmt.Sprintf("%s: restoring the backup", what)}
	case restored != nil && restored.Status == metav1.ConditionTrue:
		return waiting(fmt.Sprintf("%s: backup restored, waiting for Ready (%s)", what, condString(ready)), restored.LastTransitionTime.Time, now, wait)
	case ready != nil:
		return waiting(fmt.Sprintf("%s: waiting for the restore to start (%s)", what, condString(ready)), ready.LastTransitionTime.Time, now, wait)
	}
	return waiting(what+": waiting for the mariadb-operator (no Ready condition)", created, now, wait)
}

func condString(c *metav1.Condition) string {
	if c == nil {
		return "no Ready condition"
	}
	return fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
}

// waiting is a Waiting verdict since since, Failed once wait has passed.
func waiting(msg string, since, now time.Time, wait time.Duration) Verdict {
	if !since.IsZero() && now.Sub(since) > wait {
		return Verdict{Failed, fmt.Sprintf("%s for more than %s (the strategy's waitTimeout): check the mariadb-operator and the object's events", msg, wait)}
	}
	return Verdict{Waiting, msg}
}
