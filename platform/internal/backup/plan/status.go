package plan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/platform/internal/backup/retention"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// writeStatus applies status, the core's whole intent for plan's status,
// as v1alpha1.CoreFieldManager, unless plan (read from the API server this
// pass) already holds it: most passes change nothing (a job created, bound
// or ended wakes its Plan), and a server-side apply that changes nothing
// still costs kube-apiserver a merge. Errors are the API server's.
func (r *reconciler) writeStatus(ctx context.Context, plan *v1alpha1.Plan, status v1alpha1.PlanStatus) error {
	if equality.Semantic.DeepEqual(plan.Status, status) {
		return nil
	}
	return apply.Status(ctx, r.client, plan, status, v1alpha1.CoreFieldManager)
}

// summary is what a Plan's conditions are derived from, in one place.
type summary struct {
	generation int64
	// invalid is the schedule's error, if any.
	invalid *field.Error
	suspend bool
	next    time.Time
	loc     *time.Location
	active  []string
	// retention is this pass's outcome; nil when retention was not
	// evaluated (an invalid schedule), and the Plan's Retention condition
	// then stays as it was (previous).
	retention *retention.Applied
	previous  *metav1.Condition
}

// conditions returns the Plan's conditions: Ready always; Stalled only
// with an invalid schedule; Reconciling only while Backups deleted by
// retention are being reclaimed; Retention once evaluated (kstatus:
// abnormal-true conditions are absent when false).
func (s summary) conditions() []metav1.Condition {
	gen := s.generation
	var out []metav1.Condition
	switch {
	case s.invalid != nil:
		msg := fmt.Sprintf("%s; no run is scheduled until the Plan is fixed", s.invalid.Error())
		out = append(out,
			apply.Condition(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidSchedule, gen, "%s", msg),
			apply.Condition(v1alpha1.ConditionStalled, metav1.ConditionTrue, v1alpha1.ReasonInvalidSchedule, gen, "%s", msg))
	case s.suspend:
		out = append(out, apply.Condition(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSuspended, gen,
			"spec.suspend is true: no new run starts (the next would be due at %s)%s", s.next.In(s.loc).Format(time.RFC3339), activeNote(s.active, " and go on")))
	default:
		out = append(out, apply.Condition(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonScheduled, gen,
			"the next run is due at %s%s", s.next.In(s.loc).Format(time.RFC3339), activeNote(s.active, "")))
	}
	if s.retention != nil && len(s.retention.Terminating) > 0 {
		out = append(out, apply.Condition(v1alpha1.ConditionReconciling, metav1.ConditionTrue, v1alpha1.ReasonProgressing, gen,
			"%d Backups are being deleted while their driver reclaims their data: %s", len(s.retention.Terminating), retention.Names(s.retention.Terminating)))
	}
	switch {
	case s.retention != nil:
		out = append(out, s.retention.Condition)
	case s.previous != nil:
		out = append(out, *s.previous)
	}
	return out
}

func activeNote(active []string, suffix string) string {
	switch len(active) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("; job %s is active%s", active[0], suffix)
	}
	return fmt.Sprintf("; jobs %s are active%s", strings.Join(active, ", "), suffix)
}
