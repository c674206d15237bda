package plan

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// observed is what a Plan's BackupJobs say.
type observed struct {
	// jobs are the Plan's jobs (label backups.cozystack.io/plan, a
	// controller reference to this Plan and its UID in status.planUID)
	// by name.
	jobs map[string]*v1alpha1.BackupJob
	// active are the names of those neither in a terminal phase nor being
	// deleted, sorted.
	active []string
	// lastSuccessful is the latest completionTime of a Succeeded job.
	lastSuccessful *metav1.Time
}

// observe lists plan's BackupJobs from the cache.
func (r *reconciler) observe(ctx context.Context, plan *v1alpha1.Plan) (observed, error) {
	var list v1alpha1.BackupJobList
	if err := r.client.List(ctx, &list, client.InNamespace(plan.Namespace), client.MatchingLabels{v1alpha1.LabelPlan: plan.Name}); err != nil {
		return observed{}, fmt.Errorf("list the BackupJobs of Plan %s/%s: %w", plan.Namespace, plan.Name, err)
	}
	o := observed{jobs: map[string]*v1alpha1.BackupJob{}}
	for i := range list.Items {
		j := &list.Items[i]
		if !metav1.IsControlledBy(j, plan) {
			// A job made by hand, or by a former Plan of the same name.
			continue
		}
		if !recorded(j, plan) {
			// A job made by hand to look like the Plan's: its label and
			// controller reference are a tenant's to write, the status is
			// not (contract k7, "Retention"). It takes no concurrency slot.
			continue
		}
		o.jobs[j.Name] = j
		if !j.Status.Phase.Terminal() && j.DeletionTimestamp == nil {
			o.active = append(o.active, j.Name)
		}
		if j.Status.Phase == v1alpha1.PhaseSucceeded && j.Status.CompletionTime != nil {
			o.lastSuccessful = later(o.lastSuccessful, j.Status.CompletionTime)
		}
	}
	slices.Sort(o.active)
	return o, nil
}

// start creates the BackupJob of plan's run scheduled at scheduled, or
// adopts it when it exists and is plan's: the deterministic name
// (JobName) makes a second creation for one scheduled time fail with
// AlreadyExists. A job of that name that is not plan's is an error.
func (r *reconciler) start(ctx context.Context, plan *v1alpha1.Plan, scheduled time.Time, o *observed) (string, error) {
	name := JobName(plan.Name, scheduled)
	if j, ok := o.jobs[name]; ok {
		return name, r.mark(ctx, plan, j)
	}
	job := &v1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: plan.Namespace,
			Labels:    map[string]string{v1alpha1.LabelPlan: plan.Name},
		},
		Spec: v1alpha1.BackupJobSpec{
			ApplicationRef:  plan.Spec.ApplicationRef,
			BackupClassName: plan.Spec.BackupClassName,
		},
	}
	if err := controllerutil.SetControllerReference(plan, job, r.client.Scheme()); err != nil {
		return "", err
	}
	err := r.client.Create(ctx, job, client.FieldOwner(v1alpha1.CoreFieldManager))
	switch {
	case err == nil:
		r.event(plan, corev1.EventTypeNormal, "JobCreated", "Create", "created BackupJob %s for the run due at %s", name, scheduled.UTC().Format(time.RFC3339))
	case apierrors.IsAlreadyExists(err):
		existing := &v1alpha1.BackupJob{}
		if err := r.reader.Get(ctx, client.ObjectKeyFromObject(job), existing); err != nil {
			return "", fmt.Errorf("get BackupJob %s/%s: %w", job.Namespace, name, err)
		}
		if !metav1.IsControlledBy(existing, plan) || !sameRun(existing, job) {
			return "", fmt.Errorf("the run due at %s is not started: BackupJob %s/%s exists and is not this Plan's; delete or rename it",
				scheduled.UTC().Format(time.RFC3339), job.Namespace, name)
		}
		job = existing
	default:
		return "", fmt.Errorf("create BackupJob %s/%s: %w", job.Namespace, name, err)
	}
	o.jobs[name] = job
	if err := r.mark(ctx, plan, job); err != nil {
		return "", err
	}
	if !job.Status.Phase.Terminal() && !slices.Contains(o.active, name) {
		o.active = append(o.active, name)
		slices.Sort(o.active)
	}
	return name, nil
}

// mark records plan's UID in job's status.planUID (as
// v1alpha1.PlanFieldManager, apart from the binder's intent), which the
// driver copies to the Backup's label backups.cozystack.io/plan-uid: the
// only thing the Plan's retention counts (contract k7, "Retention"). A
// tenant may write a job's labels and ownerReferences, never its status,
// so a job made by hand never carries it. mark is called for the job the
// Plan just created, or for the job of its run's name that it controls and
// that backs up what the Plan does (a job made by hand to look exactly
// like the Plan's run is that run).
func (r *reconciler) mark(ctx context.Context, plan *v1alpha1.Plan, job *v1alpha1.BackupJob) error {
	switch job.Status.PlanUID {
	case plan.UID:
		return nil
	case "":
	default:
		return fmt.Errorf("BackupJob %s/%s records Plan UID %s, not this Plan's (%s): delete or rename it", job.Namespace, job.Name, job.Status.PlanUID, plan.UID)
	}
	if !metav1.IsControlledBy(job, plan) || job.Spec.ApplicationRef != plan.Spec.ApplicationRef || job.Spec.BackupClassName != plan.Spec.BackupClassName {
		return fmt.Errorf("BackupJob %s/%s is not this Plan's run: it backs up %s with class %s; delete or rename it",
			job.Namespace, job.Name, job.Spec.ApplicationRef.Name, job.Spec.BackupClassName)
	}
	if err := apply.Status(ctx, r.client, job, map[string]any{"planUID": plan.UID}, v1alpha1.PlanFieldManager); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("record Plan %s in BackupJob %s/%s (status.planUID): %w", plan.Name, job.Namespace, job.Name, err)
	}
	job.Status.PlanUID = plan.UID
	return nil
}

// recorded reports whether job, controlled by plan, is plan's own: it
// records plan's UID in status.planUID, or it is the job of the run the
// Plan started last (status.lastScheduleTime), whose record may not have
// reached the cache yet (mark writes it right after the create).
func recorded(job *v1alpha1.BackupJob, plan *v1alpha1.Plan) bool {
	switch job.Status.PlanUID {
	case plan.UID:
		return true
	case "":
		last := plan.Status.LastScheduleTime
		return last != nil && job.Name == JobName(plan.Name, last.Time)
	}
	return false
}

// sameRun reports whether existing backs up what want, the job a Plan
// would create, does.
func sameRun(existing, want *v1alpha1.BackupJob) bool {
	return existing.Spec.ApplicationRef == want.Spec.ApplicationRef && existing.Spec.BackupClassName == want.Spec.BackupClassName
}

// cancel sets spec.cancel on the active job (Replace); the bound
// driver stops the run, and the job ends Cancelled.
func (r *reconciler) cancel(ctx context.Context, plan *v1alpha1.Plan, job *v1alpha1.BackupJob) error {
	if job.Spec.Cancel {
		return nil
	}
	patch := client.MergeFrom(job.DeepCopy())
	job.Spec.Cancel = true
	if err := r.client.Patch(ctx, job, patch, client.FieldOwner(v1alpha1.CoreFieldManager)); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("cancel BackupJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	r.event(plan, corev1.EventTypeNormal, "JobCancelled", "Replace", "cancelled BackupJob %s: spec.concurrencyPolicy is Replace and a new run came due", job.Name)
	return nil
}

func later(a, b *metav1.Time) *metav1.Time {
	switch {
	case a == nil:
		return b
	case b == nil || !b.After(a.Time):
		return a
	}
	return b
}
