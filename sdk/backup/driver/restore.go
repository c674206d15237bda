package driver

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// restoreOps runs RestoreJobs.
type restoreOps struct{ rt *replica }

func (restoreOps) kind() string             { return "RestoreJob" }
func (restoreOps) operation() Operation     { return OperationRestore }
func (restoreOps) newObject() client.Object { return &v1alpha1.RestoreJob{} }
func (restoreOps) status(o client.Object) *v1alpha1.JobStatus {
	return &o.(*v1alpha1.RestoreJob).Status.JobStatus
}
func (restoreOps) backupName(client.Object) string      { return "" }
func (restoreOps) cancelRequested(o client.Object) bool { return o.(*v1alpha1.RestoreJob).Spec.Cancel }

func (r restoreOps) reconcile(ctx context.Context, o client.Object, run Run) (Outcome, error) {
	rr, err := r.run(ctx, o.(*v1alpha1.RestoreJob), run)
	if err != nil {
		return Outcome{}, err
	}
	return r.rt.drv.ReconcileRestore(ctx, rr)
}

func (r restoreOps) cancel(ctx context.Context, o client.Object, run Run) error {
	rr, err := r.run(ctx, o.(*v1alpha1.RestoreJob), run)
	if err != nil {
		if _, _, ok := terminal(err); !ok {
			return err
		}
		// The Backup is gone or not ours: the driver still removes what
		// the run created, knowing only the job.
		job := o.(*v1alpha1.RestoreJob)
		rr = &RestoreRun{Run: run, Job: job, Backup: &v1alpha1.Backup{}}
	}
	return r.rt.drv.CancelRestore(ctx, rr)
}

func (restoreOps) succeed(context.Context, client.Object, Run, Outcome) (string, error) {
	return "", nil
}

// run reads the Backup restored and resolves the target (contract k7,
// "Restores"). The core authorized the read before binding the job.
func (r restoreOps) run(ctx context.Context, job *v1alpha1.RestoreJob, run Run) (*RestoreRun, error) {
	ns := job.Spec.BackupRef.Namespace
	if ns == "" {
		ns = job.Namespace
	}
	b := &v1alpha1.Backup{}
	if err := run.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Spec.BackupRef.Name}, b); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, Fail(v1alpha1.ReasonBackendFailed, "Backup %s/%s does not exist (deleted after the job was bound)", ns, job.Spec.BackupRef.Name)
		}
		return nil, err
	}
	if b.Spec.DriverRef.Name != r.rt.opts.Name {
		return nil, Fail(v1alpha1.ReasonBackendFailed, "Backup %s/%s was taken by driver %s, not %s: the job's binding does not match its Backup",
			ns, b.Name, b.Spec.DriverRef.Name, r.rt.opts.Name)
	}
	rr := &RestoreRun{Run: run, Job: job, Backup: b, Target: b.Spec.ApplicationRef}
	if job.Spec.Target.Mode == v1alpha1.RestoreNewApplication {
		if !slices.Contains(r.rt.opts.Capabilities, v1alpha1.CapabilityRestoreToNew) {
			return nil, Fail(v1alpha1.ReasonCapabilityMissing, "driver %s lacks the capability %s that mode %s needs: restore in place, or use a class whose driver has it",
				r.rt.opts.Name, v1alpha1.CapabilityRestoreToNew, v1alpha1.RestoreNewApplication)
		}
		rr.Target.Name = job.Spec.Target.ApplicationName
		if t := job.Status.TargetRef; t != nil {
			rr.Target = *t
		}
	}
	return rr, nil
}
