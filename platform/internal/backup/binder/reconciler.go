package binder

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"cozystack.io/platform/internal/backup/drivers"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

type reconciler struct {
	// client reads through the manager's cache and writes.
	client client.Client
	// live reads the API server directly, to confirm a refused write.
	live     client.Reader
	clock    clock.PassiveClock
	resolver *drivers.Resolver
	recorder recorder.EventRecorder
	resync   time.Duration
}

// Reconcile binds one BackupJob, or records why it waits or failed.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &backupsv1alpha1.BackupJob{}
	if err := r.client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if unlabelled(job) {
		return ctrl.Result{}, r.label(ctx, job, job.Status.Binding.DriverRef.Name)
	}
	if job.Status.Binding == nil && job.Spec.Cancel && !job.Status.Phase.Terminal() && job.DeletionTimestamp == nil {
		// No driver holds it and nothing was created: the core ends it.
		return ctrl.Result{}, r.cancelUnbound(ctx, job)
	}
	if !waiting(job) {
		return ctrl.Result{}, nil
	}
	now := r.clock.Now()
	o, err := r.decide(ctx, job, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.write(ctx, job, o, now); err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsNotFound(err) {
			// The cache was behind: the job was bound, ended or deleted
			// meanwhile, and the API server refused to change that.
			cur := &backupsv1alpha1.BackupJob{}
			if gerr := r.live.Get(ctx, req.NamespacedName, cur); apierrors.IsNotFound(gerr) || (gerr == nil && !waiting(cur)) {
				ctrl.LoggerFrom(ctx).V(1).Info("job no longer waiting; status write refused", "error", err.Error())
				return ctrl.Result{}, nil
			}
		}
		return ctrl.Result{}, err
	}
	switch {
	case o.binding != nil:
		return ctrl.Result{}, r.label(ctx, job, o.binding.DriverRef.Name)
	case o.failed:
		return ctrl.Result{}, nil
	}
	// Waiting: again at the wait bound, or after resync at the latest.
	return ctrl.Result{RequeueAfter: max(min(o.deadline.Sub(now), r.resync), 100*time.Millisecond)}, nil
}
