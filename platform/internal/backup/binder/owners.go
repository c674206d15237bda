package binder

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/snapshot"
)

// OwnersName is the name of the controller that makes each Backup an
// owner of its snapshot (logs, metrics).
const OwnersName = "backup-snapshot-owners"

// ownersReconciler adds every Backup with a snapshot reference to the
// ownerReferences of the snapshot's owners ConfigMap, so the snapshot
// outlives the job that took it for as long as a Backup needs it, and
// goes with the last of them (contract k7, "Snapshots"). The Backup is
// written by its driver; the core adds the owner as soon as it sees it,
// while the job (the first owner) normally still exists.
type ownersReconciler struct {
	client   client.Client
	live     client.Reader
	recorder recorder.EventRecorder
}

func (r *ownersReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := &backupsv1alpha1.Backup{}
	if err := r.client.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ref := b.Spec.ApplicationSnapshotRef
	if ref == nil || b.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	owner := ownerRef("Backup", backupsv1alpha1.GroupVersion.String(), b.Name, b.UID)
	_, _, err := addOwner(ctx, r.live, r.client, b.Namespace, snapshot.OwnersName(ref.ConfigMapName), owner, nil)
	if apierrors.IsNotFound(err) {
		// Gone with its last job before the Backup was seen: a restore
		// to a new application from it fails with SnapshotMissing.
		if r.recorder != nil {
			r.recorder.Eventf(b, nil, corev1.EventTypeWarning, backupsv1alpha1.ReasonSnapshotMissing, "Own",
				"the application snapshot %s (digest %s) of this Backup no longer exists: it cannot be restored to a new application", ref.ConfigMapName, ref.Digest)
		}
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, err
}

// setupOwners registers the ownersReconciler with mgr.
func setupOwners(mgr ctrl.Manager) error {
	r := &ownersReconciler{client: mgr.GetClient(), live: mgr.GetAPIReader(), recorder: mgr.GetEventRecorder(OwnersName)}
	withRef := predicate.And(
		predicate.NewPredicateFuncs(func(obj client.Object) bool {
			b, ok := obj.(*backupsv1alpha1.Backup)
			return ok && b.Spec.ApplicationSnapshotRef != nil
		}),
		predicate.Funcs{DeleteFunc: func(event.DeleteEvent) bool { return false }},
	)
	return ctrl.NewControllerManagedBy(mgr).Named(OwnersName).
		For(&backupsv1alpha1.Backup{}, builder.WithPredicates(withRef)).
		Complete(r)
}
