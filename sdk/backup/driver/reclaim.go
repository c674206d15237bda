package driver

import (
	"context"
	"slices"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// reclaimReconciler deletes the backend data of this driver's Backups being
// deleted, then releases them (contract k7, "Retention"). Every replica
// runs it: Reclaim is idempotent, and removing the finalizer is guarded by
// the Backup's resourceVersion.
type reclaimReconciler struct {
	rt  *replica
	drv Reclaimer
}

func (r *reclaimReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o := r.rt.opts
	b := &v1alpha1.Backup{}
	if err := r.rt.cache.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if b.Spec.DriverRef.Name != o.Name || b.DeletionTimestamp == nil || !slices.Contains(b.Finalizers, v1alpha1.BackupFinalizer) {
		return ctrl.Result{}, nil
	}
	// The cache may still hold a Backup this replica (or another) just
	// released: read it live, so a finished reclaim is not started again.
	if err := r.rt.client.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !slices.Contains(b.Finalizers, v1alpha1.BackupFinalizer) {
		return ctrl.Result{}, nil
	}
	run := &ReclaimRun{Run: Run{Driver: o.Name, Identity: o.Identity, Namespace: o.Namespace, Strategy: b.Spec.Strategy,
		Client: r.rt.client, obj: b, kind: "Backup"}, Backup: b}
	err := r.rt.drv.ValidateParameters(ctx, OperationReclaim, b.Spec.Strategy)
	var out Outcome
	if err == nil {
		out, err = r.drv.Reclaim(ctx, run)
	}
	if err != nil {
		// The Backup stays (its data may still exist); the condition says
		// why, and the next attempt comes with backoff.
		c := apply.Condition(v1alpha1.ConditionReclaim, metav1.ConditionFalse, v1alpha1.ReasonReclaimFailed, 0,
			"%s", cut("the driver could not delete the backup's data: "+err.Error()+"; retrying", 32768))
		if old := apimeta.FindStatusCondition(b.Status.Conditions, v1alpha1.ConditionReclaim); old == nil || old.Message != c.Message {
			st := backupStatus{Conditions: append(apply.Owned(b.Status.Conditions, v1alpha1.ConditionReady),
				apply.Conditions(b.Status.Conditions, time.Now(), c)...)}
			if werr := apply.Status(ctx, r.rt.client, b, st, v1alpha1.DriverFieldManager(o.Name)); werr != nil {
				log.FromContext(ctx).Error(werr, "write Reclaim condition", "backup", req.NamespacedName)
			}
		}
		return ctrl.Result{}, err
	}
	if !out.Done {
		after := out.RequeueAfter
		if after <= 0 {
			after = o.PollInterval
		}
		return ctrl.Result{RequeueAfter: after}, nil
	}
	patch := client.MergeFromWithOptions(b.DeepCopy(), client.MergeFromWithOptimisticLock{})
	b.Finalizers = slices.DeleteFunc(b.Finalizers, func(f string) bool { return f == v1alpha1.BackupFinalizer })
	if err := r.rt.client.Patch(ctx, b, patch); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	return ctrl.Result{}, nil
}
