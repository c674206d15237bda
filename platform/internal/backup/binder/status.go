package binder

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// ownedConditions are the condition types the binder sends on an unbound
// job, in the order it sends them; any other is another writer's.
var ownedConditions = []string{
	backupsv1alpha1.ConditionReady, backupsv1alpha1.ConditionDriverBound, backupsv1alpha1.ConditionReconciling,
}

// summarize returns the core's whole status intent for job under o at now:
// observedGeneration, phase, DriverBound, and Reconciling=True
// WaitingForDriver while the job waits for a driver or its claim, or
// Ready=False (with phase Failed and completionTime) for a failure the
// core decides; with Bound also the binding and the application snapshot.
// A Ready the job holds is resent while it waits. Conditions keep their
// lastTransitionTime while their status stays (apply.Conditions).
func summarize(job *backupsv1alpha1.BackupJob, o outcome, now time.Time) backupsv1alpha1.BackupJobStatus {
	gen := job.Generation
	st := backupsv1alpha1.BackupJobStatus{JobStatus: backupsv1alpha1.JobStatus{
		ObservedGeneration: gen,
		Phase:              backupsv1alpha1.PhasePending,
	}}
	bound := apply.Condition(backupsv1alpha1.ConditionDriverBound, metav1.ConditionFalse, o.reason, gen, "%s", o.message)
	if o.reason == backupsv1alpha1.ReasonBound {
		bound.Status = metav1.ConditionTrue
	}
	var want []metav1.Condition
	switch {
	case o.failed:
		want = append(want, apply.Condition(backupsv1alpha1.ConditionReady, metav1.ConditionFalse, o.reason, gen, "%s", o.message), bound)
		st.Phase = backupsv1alpha1.PhaseFailed
		st.CompletionTime = &metav1.Time{Time: now.UTC().Truncate(time.Second)}
	case o.binding != nil:
		want = append(apply.Owned(job.Status.Conditions, backupsv1alpha1.ConditionReady), bound,
			apply.Condition(backupsv1alpha1.ConditionReconciling, metav1.ConditionTrue, backupsv1alpha1.ReasonWaitingForDriver, gen,
				"bound to BackupDriver %s; waiting for it to claim the job (within %s, else the job fails with %s)",
				o.binding.DriverRef.Name, o.binding.Timeouts.Pending.Duration, backupsv1alpha1.ReasonPendingTimeout))
		st.Binding = o.binding
		st.ApplicationSnapshotRef = o.snapshot
	default:
		want = append(apply.Owned(job.Status.Conditions, backupsv1alpha1.ConditionReady), bound,
			apply.Condition(backupsv1alpha1.ConditionReconciling, metav1.ConditionTrue, backupsv1alpha1.ReasonWaitingForDriver, gen,
				"waiting for a driver (%s) until %s, then the job fails with %s",
				o.reason, o.deadline.UTC().Format(time.RFC3339), backupsv1alpha1.ReasonDriverWaitTimeout))
	}
	st.Conditions = apply.Conditions(job.Status.Conditions, now, want...)
	return st
}

// write applies the status o calls for, when it differs from the job's,
// and emits an event when DriverBound's reason changes. Errors are the
// API server's: 422 Invalid when the job was bound or ended meanwhile.
func (r *reconciler) write(ctx context.Context, job *backupsv1alpha1.BackupJob, o outcome, now time.Time) error {
	want := summarize(job, o, now)
	cur := backupsv1alpha1.BackupJobStatus{JobStatus: backupsv1alpha1.JobStatus{
		ObservedGeneration: job.Status.ObservedGeneration,
		Phase:              job.Status.Phase,
		Conditions:         apply.Owned(job.Status.Conditions, ownedConditions...),
	}}
	if o.binding == nil && !o.failed && equality.Semantic.DeepEqual(cur, want) {
		return nil
	}
	if err := apply.Status(ctx, r.client, job, want, backupsv1alpha1.CoreFieldManager); err != nil {
		return fmt.Errorf("write the status of BackupJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	if prev := apimeta.FindStatusCondition(job.Status.Conditions, backupsv1alpha1.ConditionDriverBound); r.recorder != nil && (prev == nil || prev.Reason != o.reason) {
		typ := corev1.EventTypeWarning
		if o.reason == backupsv1alpha1.ReasonBound {
			typ = corev1.EventTypeNormal
		}
		r.recorder.Eventf(job, nil, typ, o.reason, "Bind", "%s", o.message)
	}
	return nil
}

// label sets the job's label backups.cozystack.io/driver to driver by a
// merge patch as the core's field manager, so the driver's cache holds
// the job. A driver name that is no valid label value (over 63
// characters) is logged and left out.
func (r *reconciler) label(ctx context.Context, job *backupsv1alpha1.BackupJob, driver string) error {
	if job.Labels[backupsv1alpha1.LabelDriver] == driver {
		return nil
	}
	if errs := validation.IsValidLabelValue(driver); len(errs) > 0 {
		ctrl.LoggerFrom(ctx).Error(fmt.Errorf("%v", errs), "driver name is no label value; the job is not labelled", "driver", driver)
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{backupsv1alpha1.LabelDriver: driver}}})
	if err != nil {
		return err
	}
	err = r.client.Patch(ctx, job, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(backupsv1alpha1.CoreFieldManager))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("label BackupJob %s/%s with its driver %s: %w", job.Namespace, job.Name, driver, err)
	}
	return nil
}

// cancelUnbound ends an unbound job whose spec.cancel is set: phase
// Cancelled, Ready=False reason Cancelled, keeping the DriverBound
// condition that says why it was waiting.
func (r *reconciler) cancelUnbound(ctx context.Context, job *backupsv1alpha1.BackupJob) error {
	now := r.clock.Now()
	st := backupsv1alpha1.BackupJobStatus{JobStatus: backupsv1alpha1.JobStatus{
		ObservedGeneration: job.Generation,
		Phase:              backupsv1alpha1.PhaseCancelled,
		CompletionTime:     &metav1.Time{Time: now.UTC().Truncate(time.Second)},
	}}
	cancelled := apply.Condition(backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonCancelled, job.Generation,
		"cancelled (spec.cancel) before a driver was bound; nothing was created")
	st.Conditions = apply.Conditions(job.Status.Conditions, now,
		append([]metav1.Condition{cancelled}, apply.Owned(job.Status.Conditions, backupsv1alpha1.ConditionDriverBound)...)...)
	return apply.Status(ctx, r.client, job, st, backupsv1alpha1.CoreFieldManager)
}
