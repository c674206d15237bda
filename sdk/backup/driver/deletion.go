package driver

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// This file is the deletion half of contract k7 ("Deletion"): a job's
// backend objects go with the job, unless it produced a Backup, which then
// keeps them.
//
//   - At claim the SDK puts the finalizer v1alpha1.JobFinalizer on the job.
//     When the job is deleted before it produced a Backup (running,
//     failed, cancelled, or a RestoreJob), the SDK calls Cancel* (which
//     removes what the run created, in every namespace: a Velero Backup
//     lives in Velero's) and then releases the finalizer.
//   - Backend objects of a kind in Options.Watches that Run.CreateOrAdopt
//     creates in the job's namespace also carry an ownerReference to the
//     job, so the garbage collector takes them even if the finalizer is
//     removed by hand. When the backup succeeds, the SDK moves that
//     ownerReference to the Backup: deleting the finished job keeps the
//     data, deleting the Backup takes it (Reclaim, or the collector).
//   - A later job of the same name derives the same object names. What an
//     earlier job of that name left (Run.Orphan) is deleted by
//     Run.CreateOrAdopt instead of being a conflict.

// hasFinalizer reports whether obj carries the job finalizer.
func hasFinalizer(obj client.Object) bool {
	return slices.Contains(obj.GetFinalizers(), v1alpha1.JobFinalizer)
}

// setFinalizer adds (on) or removes the job finalizer by a merge patch
// guarded by obj's resourceVersion; obj is then the server's copy.
func setFinalizer(ctx context.Context, c client.Client, obj client.Object, on bool) error {
	if hasFinalizer(obj) == on {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	fs := slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(f string) bool { return f == v1alpha1.JobFinalizer })
	if on {
		fs = append(fs, v1alpha1.JobFinalizer)
	}
	obj.SetFinalizers(fs)
	return c.Patch(ctx, obj, patch)
}

// deleted handles a job being deleted that carries the job finalizer: a
// BackupJob that produced a Backup hands its backend objects to it; any
// other job's run is cancelled (its backend objects removed). Then the
// finalizer goes. A running job whose claim another replica holds fresh is
// left to that replica (it sees the deletion too and is the only one that
// may be creating objects right now).
func (r *jobReconciler) deleted(ctx context.Context, obj client.Object, st *v1alpha1.JobStatus) (ctrl.Result, error) {
	o := r.rt.opts
	logger := log.FromContext(ctx).WithValues("driver", o.Name, "identity", o.Identity)
	key := client.ObjectKeyFromObject(obj)
	// The cache may be behind: read live, so a released job is not
	// cancelled again and the patch below has a current resourceVersion.
	if err := r.rt.client.Get(ctx, key, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !hasFinalizer(obj) {
		return ctrl.Result{}, nil
	}
	st = r.ops.status(obj)
	if !st.Phase.Terminal() {
		if action, wait := decideClaim(st.Claim, o.Identity, time.Now()); action == claimWait {
			return ctrl.Result{RequeueAfter: wait + jitter(o.ClaimDuration)}, nil
		}
	}
	var takeovers int32
	if st.Claim != nil {
		takeovers = st.Claim.Takeovers
	}
	run := r.newRun(obj, st, takeovers)
	if name := r.ops.backupName(obj); name != "" {
		// The Backup keeps the data: make sure it owns what the job owned
		// (done at success; again here after a lost write).
		b := &v1alpha1.Backup{}
		err := r.rt.client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}, b)
		if err == nil && b.DeletionTimestamp == nil {
			err = r.rt.transferOwnership(ctx, &run, b)
		}
		if client.IgnoreNotFound(err) != nil {
			logger.Error(err, "hand the backend objects of a deleted job to its Backup; retrying", "job", key)
			return ctrl.Result{RequeueAfter: time.Second + jitter(time.Second)}, nil
		}
	} else if err := r.ops.cancel(ctx, obj, run); err != nil {
		logger.Error(err, "remove the backend objects of a deleted job; retrying", "job", key)
		return ctrl.Result{RequeueAfter: time.Second + jitter(time.Second)}, nil
	}
	if err := setFinalizer(ctx, r.rt.client, obj, false); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: 100*time.Millisecond + jitter(time.Second)}, nil
	}
	logger.Info("released a deleted job", "job", key, "backup", r.ops.backupName(obj))
	return ctrl.Result{}, nil
}

// ownerRef is the ownerReference of a backend object to owner (a job or a
// Backup): not a controller reference, never blocking the owner's deletion
// (that would need the owner's finalizers subresource).
func ownerRef(c client.Client, owner client.Object) (metav1.OwnerReference, error) {
	gvk, err := apiutil.GVKForObject(owner, c.Scheme())
	if err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("kind of owner %s: %w", owner.GetName(), err)
	}
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID()}, nil
}

// ownable reports whether obj, about to be created by the run, gets an
// ownerReference to the run's job: only a job's run (not a reclaim), only
// in the job's own namespace (an ownerReference cannot cross namespaces:
// the collector would delete the object at once), and only for a kind in
// Options.Watches, the kinds whose objects the SDK can list to hand over
// to the Backup at success.
func (r *Run) ownable(obj client.Object) bool {
	if r.kind != "BackupJob" && r.kind != "RestoreJob" || obj.GetNamespace() == "" || obj.GetNamespace() != r.obj.GetNamespace() {
		return false
	}
	if r.rt == nil {
		return false
	}
	gvk, err := apiutil.GVKForObject(obj, r.Client.Scheme())
	return err == nil && slices.Contains(r.rt.owned, gvk)
}

// addOwner adds the job's ownerReference to obj (ownable).
func (r *Run) addOwner(obj client.Object) error {
	ref, err := ownerRef(r.Client, r.obj)
	if err != nil {
		return err
	}
	refs := obj.GetOwnerReferences()
	if slices.ContainsFunc(refs, func(x metav1.OwnerReference) bool { return x.UID == ref.UID }) {
		return nil
	}
	obj.SetOwnerReferences(append(refs, ref))
	return nil
}

// transferOwnership moves the ownerReference to the run's job on the run's
// backend objects (of the kinds in Options.Watches, in the job's
// namespace) to b, the Backup the run produced. Idempotent.
func (rt *replica) transferOwnership(ctx context.Context, run *Run, b *v1alpha1.Backup) error {
	to, err := ownerRef(rt.client, b)
	if err != nil {
		return err
	}
	for _, gvk := range rt.owned {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind + "List"})
		if err := run.List(ctx, list, client.InNamespace(run.obj.GetNamespace())); err != nil {
			return err
		}
		for i := range list.Items {
			u := &list.Items[i]
			refs := u.GetOwnerReferences()
			i := slices.IndexFunc(refs, func(x metav1.OwnerReference) bool { return x.UID == run.UID() })
			if i < 0 {
				continue
			}
			patch := client.MergeFromWithOptions(u.DeepCopy(), client.MergeFromWithOptimisticLock{})
			refs = slices.Delete(slices.Clone(refs), i, i+1)
			if !slices.ContainsFunc(refs, func(x metav1.OwnerReference) bool { return x.UID == to.UID }) {
				refs = append(refs, to)
			}
			u.SetOwnerReferences(refs)
			if err := rt.client.Patch(ctx, u, patch); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("hand %s %s/%s to Backup %s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), b.Name, err)
			}
		}
	}
	return nil
}

// Orphan reports whether obj, found under a name this run derived but not
// labelled with this run, is what an earlier job of the same kind,
// namespace and name left: it carries this driver's label, AnnotationJob
// naming this run's job (JobRef), the run label of another run, and no
// Backup of that run exists in the job's namespace (so no Backup needs it).
// The earlier job is gone (a name is unique in its namespace, and this job
// holds it now), so the object belongs to no one and may be removed;
// Run.CreateOrAdopt does so for the objects it creates, a driver that
// looks its objects up itself calls Orphan. Always false for a reclaim.
// Errors are the API server's (listing Backups).
func (r *Run) Orphan(ctx context.Context, obj client.Object) (bool, error) {
	if r.kind != "BackupJob" && r.kind != "RestoreJob" {
		return false, nil
	}
	found := obj.GetLabels()[v1alpha1.LabelRun]
	if found == "" || found == string(r.UID()) || obj.GetLabels()[v1alpha1.LabelDriver] != r.Driver ||
		obj.GetAnnotations()[AnnotationJob] != r.JobRef() {
		return false, nil
	}
	var backups v1alpha1.BackupList
	if err := r.Client.List(ctx, &backups, client.InNamespace(r.obj.GetNamespace()), client.MatchingLabels{v1alpha1.LabelRun: found}); err != nil {
		return false, err
	}
	return len(backups.Items) == 0, nil
}

// removeOrphan deletes obj, an Orphan, guarded by its UID and
// resourceVersion (an object changed or replaced meanwhile is left).
func (r *Run) removeOrphan(ctx context.Context, obj client.Object) error {
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	err := r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if apierrors.IsConflict(err) {
		return fmt.Errorf("%s, left by an earlier job of this name, changed while being deleted; retrying", describe(r.Client, obj))
	}
	if err == nil || apierrors.IsNotFound(err) {
		log.FromContext(ctx).Info("deleted what an earlier job of the same name left", "object", describe(r.Client, obj),
			"earlierRun", obj.GetLabels()[v1alpha1.LabelRun], "run", r.UID())
		return nil
	}
	return err
}
