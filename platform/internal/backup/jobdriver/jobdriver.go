package jobdriver

import (
	"context"
	"errors"
	"fmt"
	"maps"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// StrategyKind is the strategy kind the Job driver serves.
const StrategyKind = "Job"

// jobDriver implements driver.Driver and driver.Reclaimer.
type jobDriver struct{}

var (
	_ driver.Driver    = jobDriver{}
	_ driver.Reclaimer = jobDriver{}
)

func (jobDriver) ValidateParameters(_ context.Context, op driver.Operation, s v1alpha1.Strategy) error {
	return validate(op, s.Parameters)
}

func (d jobDriver) ReconcileBackup(ctx context.Context, run *driver.BackupRun) (driver.Outcome, error) {
	job := run.Job
	snap, err := run.Snapshot(ctx)
	if err != nil {
		return driver.Outcome{}, err
	}
	data := TemplateData{
		"Application": appData(job.Spec.ApplicationRef, job.Namespace),
		"Job":         jobData("BackupJob", job.Name, job.Namespace, string(job.UID)),
		"Snapshot":    object(snap),
	}
	var raw rawParameters
	if err := run.DecodeParameters(&raw); err != nil {
		return driver.Outcome{}, err
	}
	// driverData is rendered before the Job exists, with everything else.
	dd, err := renderData(raw.DriverData, data)
	if err != nil {
		return driver.Outcome{}, err
	}
	overlay, err := driver.RenderJSON("restoreOverlay", raw.RestoreOverlay, data)
	if err != nil {
		return driver.Outcome{}, err
	}
	bj, out, err := d.runJob(ctx, &run.Run, className(job.Status.Binding), "backup", raw.Backup, raw, data, nil)
	if err != nil || !out.Done {
		return out, err
	}
	dd["job"] = bj.Name
	out.DriverData = dd
	if overlay != nil {
		out.RestoreOverlay = overlay
	}
	return out, nil
}

func (d jobDriver) ReconcileRestore(ctx context.Context, run *driver.RestoreRun) (driver.Outcome, error) {
	job := run.Job
	snap, err := run.Snapshot(ctx)
	if err != nil {
		return driver.Outcome{}, err
	}
	data := TemplateData{
		"Application": appData(run.Target, job.Namespace),
		"Job":         jobData("RestoreJob", job.Name, job.Namespace, string(job.UID)),
		"Snapshot":    object(snap),
		"Backup":      backupData(run.Backup),
	}
	var raw rawParameters
	if err := run.DecodeParameters(&raw); err != nil {
		return driver.Outcome{}, err
	}
	_, out, err := d.runJob(ctx, &run.Run, className(job.Status.Binding), "restore", raw.Restore, raw, data, ownerRef("RestoreJob", job))
	return out, err
}

// runJob renders the template field (and the secrets' names) of class's
// strategy and checks the result before creating anything: its pod must
// pass Pod Security "restricted" and run as ServiceAccount (secure), its
// Secrets must be the class's own (secretSource). Then it makes the
// namespace's ServiceAccount, projects the Secrets, creates or adopts the
// run's Job (owned by owner when set) and reports it.
func (jobDriver) runJob(ctx context.Context, run *driver.Run, class, field string, tmpl *apiextensionsv1.JSON, raw rawParameters,
	data TemplateData, owner *metav1.OwnerReference) (*batchv1.Job, driver.Outcome, error) {
	secrets := map[string]any{}
	for _, s := range raw.Secrets {
		secrets[s] = run.ObjectName("cred-" + s)
	}
	data["Secrets"] = secrets
	t, err := render(field, tmpl, data)
	if err != nil {
		return nil, driver.Outcome{}, err
	}
	if err := secure(field, class, &t.Spec.Template); err != nil {
		return nil, driver.Outcome{}, err
	}
	from, err := secretSource(ctx, run.Client, run.Namespace, class, run.Strategy, raw.Secrets)
	if err != nil {
		return nil, driver.Outcome{}, err
	}
	// Rendered and checked: only now may anything be created.
	ns := run.Object().GetNamespace()
	if err := ensureServiceAccount(ctx, run.Client, ns); err != nil {
		return nil, driver.Outcome{}, err
	}
	for _, s := range raw.Secrets {
		if _, err := driver.ProjectSecret(ctx, run.Client, from, s, run.Object(), run.Labels(), run.ObjectName("cred-"+s)); err != nil {
			return nil, driver.Outcome{}, err
		}
	}
	j := &batchv1.Job{}
	j.Name, j.Namespace = run.ObjectName(field), ns
	j.Labels, j.Annotations = maps.Clone(t.Metadata.Labels), maps.Clone(t.Metadata.Annotations)
	j.Spec = t.Spec
	if owner != nil {
		j.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	if _, err := run.CreateOrAdopt(ctx, j); err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			return nil, driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed, "the %s Job rendered from the parameters' %s is refused by the API server: %v", field, field, err)
		}
		return nil, driver.Outcome{}, err
	}
	out, err := report(j)
	return j, out, err
}

// className is the class a job was bound from ("" before binding, which a
// driver never sees).
func className(b *v1alpha1.Binding) string {
	if b == nil {
		return ""
	}
	return b.BackupClassName
}

// ownerRef refers to a backups.cozystack.io object of kind.
func ownerRef(kind string, obj client.Object) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: kind, Name: obj.GetName(), UID: obj.GetUID()}
}

// report reads a Job's status: Complete is done, Failed fails the run.
func report(j *batchv1.Job) (driver.Outcome, error) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return driver.Outcome{Done: true, Progress: &driver.Progress{Percent: ptr.To[int32](100), Message: "Job " + j.Name + " complete"}}, nil
		case batchv1.JobFailed:
			return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed, "Job %s/%s failed: %s: %s (see its pods' logs)", j.Namespace, j.Name, c.Reason, c.Message)
		}
	}
	return driver.Outcome{Progress: &driver.Progress{Message: fmt.Sprintf("Job %s: %d active, %d succeeded, %d failed",
		j.Name, j.Status.Active, j.Status.Succeeded, j.Status.Failed)}}, nil
}

func (d jobDriver) CancelBackup(ctx context.Context, run *driver.BackupRun) error {
	return deleteRun(ctx, run.Client, run.Job.Namespace, string(run.UID()))
}

func (d jobDriver) CancelRestore(ctx context.Context, run *driver.RestoreRun) error {
	return deleteRun(ctx, run.Client, run.Job.Namespace, string(run.UID()))
}

// deleteRun deletes the Jobs (with their pods) and Secrets the run created.
func deleteRun(ctx context.Context, c client.Client, ns, run string) error {
	sel := client.MatchingLabels{v1alpha1.LabelRun: run}
	if err := c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(ns), sel, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return err
	}
	return c.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(ns), sel)
}

// Reclaim deletes a Backup's Job and, when the class has a cleanup
// template, runs the cleanup Job to completion first (then deletes it).
func (d jobDriver) Reclaim(ctx context.Context, run *driver.ReclaimRun) (driver.Outcome, error) {
	b := run.Backup
	var raw rawParameters
	if err := run.DecodeParameters(&raw); err != nil {
		return driver.Outcome{}, err
	}
	if raw.Cleanup != nil {
		snap, err := run.Snapshot(ctx)
		var re *driver.RunError
		if errors.As(err, &re) {
			// A missing or changed snapshot must not keep the Backup
			// from being deleted: the cleanup renders with {} instead.
			ctrl.LoggerFrom(ctx).Info("cleanup renders without the application snapshot", "reason", re.Message)
			snap, err = nil, nil
		}
		if err != nil {
			return driver.Outcome{}, err
		}
		data := TemplateData{
			"Application": appData(b.Spec.ApplicationRef, b.Namespace),
			"Job":         jobData("Backup", b.Name, b.Namespace, string(b.UID)),
			"Snapshot":    object(snap),
			"Backup":      backupData(b),
		}
		j, out, err := d.runJob(ctx, &run.Run, b.Spec.BackupClassName, "cleanup", raw.Cleanup, raw, data, ownerRef("Backup", b))
		if err != nil {
			if j != nil {
				// A failed cleanup Job is removed so the retry runs a
				// fresh one.
				_ = deleteRun(ctx, run.Client, b.Namespace, string(b.UID))
			}
			return driver.Outcome{}, err
		}
		if !out.Done {
			return out, nil
		}
	}
	if err := deleteRun(ctx, run.Client, b.Namespace, b.Labels[v1alpha1.LabelRun]); err != nil {
		return driver.Outcome{}, err
	}
	if err := deleteRun(ctx, run.Client, b.Namespace, string(b.UID)); err != nil {
		return driver.Outcome{}, err
	}
	return driver.Outcome{Done: true}, nil
}
