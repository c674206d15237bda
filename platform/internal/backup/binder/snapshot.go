package binder

import (
	"context"
	"errors"
	"fmt"
	"slices"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/snapshot"
)

// store keeps the values of release (the job's application) as a snapshot
// (contract k7, "Snapshots") and returns the reference the job's status
// carries, or the SnapshotFailed outcome. The values are stored once per
// distinct digest in the job's namespace: a ConfigMap holding them
// (snapshot.Name), owned by a small ConfigMap (snapshot.OwnersName) whose
// ownerReferences are the jobs and Backups using it, so adding a job
// rewrites a few hundred bytes and never the values, and the garbage
// collector removes both after the last owner. ConfigMaps are read live:
// the manager does not cache them (a cache would hold every ConfigMap of
// the cluster). Errors are the API server's, and "wait for the garbage
// collector" while a previous snapshot of the digest is being removed;
// both are retried.
func (r *reconciler) store(ctx context.Context, job *backupsv1alpha1.BackupJob, release *helmv2.HelmRelease) (*backupsv1alpha1.SnapshotRef, *outcome, error) {
	var raw []byte
	if release.Spec.Values != nil {
		raw = release.Spec.Values.Raw
	}
	values, digest, err := snapshot.Canonical(raw)
	if err != nil {
		return nil, snapshotFailed("the values of HelmRelease %s/%s cannot be snapshotted: %v", release.Namespace, release.Name, err), nil
	}
	if len(values) > snapshot.MaxBytes {
		return nil, snapshotFailed("the application's spec is %d bytes (HelmRelease %s/%s spec.values, canonical JSON), more than the %d bytes a snapshot holds (one ConfigMap, 1 MiB; contract k7, Snapshots): shorten its free-text fields, then create a new job",
			len(values), release.Namespace, release.Name, snapshot.MaxBytes), nil
	}
	app := job.Spec.ApplicationRef.Name
	name := snapshot.Name(app, digest)
	owners, created, err := r.owners(ctx, job, snapshot.OwnersName(name), app, digest)
	var foreign *foreignError
	if errors.As(err, &foreign) {
		return nil, snapshotFailed("%v, then create a new job", err), nil
	}
	if err != nil {
		return nil, nil, err
	}
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: job.Namespace, Name: name}
	if created {
		// The snapshot is made after its owners: with new owners it is
		// new too (or a removed snapshot's, met by AlreadyExists below).
		err = apierrors.NewNotFound(corev1.Resource("configmaps"), name)
	} else {
		err = r.live.Get(ctx, key, cm)
	}
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: name,
				Labels:          labels(app, snapshot.LabelValues),
				Annotations:     map[string]string{snapshot.AnnotationDigest: digest},
				OwnerReferences: []metav1.OwnerReference{ownerRef("ConfigMap", corev1.SchemeGroupVersion.String(), owners.Name, owners.UID)},
			},
			Data:      map[string]string{snapshot.DataKey: string(values)},
			Immutable: ptrTrue(),
		}
		if err = r.client.Create(ctx, cm, client.FieldOwner(backupsv1alpha1.CoreFieldManager)); apierrors.IsAlreadyExists(err) {
			err = r.live.Get(ctx, key, cm)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot ConfigMap %s/%s: %w", job.Namespace, name, err)
	}
	if _, err := snapshot.Values(cm, digest); err != nil {
		var ie *snapshot.IntegrityError
		if errors.As(err, &ie) {
			return nil, snapshotFailed("%v; the core keeps it for inspection and will not reuse it: delete ConfigMap %s/%s, then create a new job", err, job.Namespace, name), nil
		}
		return nil, nil, err
	}
	if !slices.ContainsFunc(cm.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == owners.UID }) {
		// Owned by an owners ConfigMap that was removed: the garbage
		// collector is removing it.
		return nil, nil, fmt.Errorf("snapshot ConfigMap %s/%s belongs to a removed snapshot; waiting for the garbage collector", job.Namespace, name)
	}
	return &backupsv1alpha1.SnapshotRef{
		ReleaseName: release.Name, ReleaseGeneration: release.Generation,
		Digest: digest, Size: int64(len(values)), ConfigMapName: name,
	}, nil, nil
}

// owners returns the owners ConfigMap name in the job's namespace, created
// (created true) or updated so that the job is among its ownerReferences.
func (r *reconciler) owners(ctx context.Context, job *backupsv1alpha1.BackupJob, name, app, digest string) (cm *corev1.ConfigMap, created bool, err error) {
	ref := ownerRef("BackupJob", backupsv1alpha1.GroupVersion.String(), job.Name, job.UID)
	return addOwner(ctx, r.live, r.client, job.Namespace, name, ref, func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: name,
			Labels:      labels(app, snapshot.LabelOwners),
			Annotations: map[string]string{snapshot.AnnotationDigest: digest},
		}}
	})
}

// addOwner makes ref an ownerReference of the owners ConfigMap
// namespace/name (snapshot.OwnersName), creating it from create when it
// does not exist and create is not nil (created reports that this call
// created it). The update is optimistic (a conflict is returned, to
// retry). Errors: NotFound when it does not exist and create is nil;
// "being deleted" while the garbage collector removes it; the API
// server's.
func addOwner(ctx context.Context, live client.Reader, c client.Client, namespace, name string, ref metav1.OwnerReference, create func() *corev1.ConfigMap) (cm *corev1.ConfigMap, created bool, err error) {
	cm = &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: namespace, Name: name}
	err = live.Get(ctx, key, cm)
	if apierrors.IsNotFound(err) && create != nil {
		cm = create()
		cm.OwnerReferences = []metav1.OwnerReference{ref}
		if err = c.Create(ctx, cm, client.FieldOwner(backupsv1alpha1.CoreFieldManager)); err == nil {
			return cm, true, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, false, fmt.Errorf("create snapshot owners ConfigMap %s/%s: %w", namespace, name, err)
		}
		err = live.Get(ctx, key, cm)
	}
	if err != nil {
		return nil, false, fmt.Errorf("get snapshot owners ConfigMap %s/%s: %w", namespace, name, err)
	}
	if cm.DeletionTimestamp != nil {
		return nil, false, fmt.Errorf("snapshot owners ConfigMap %s/%s is being deleted; waiting for the garbage collector", namespace, name)
	}
	if cm.Labels[snapshot.LabelSnapshot] != snapshot.LabelOwners {
		return nil, false, &foreignError{fmt.Sprintf("ConfigMap %s/%s, the name of the application snapshot's owners, is not the backup core's (no label %s=%s): rename or remove it", namespace, name, snapshot.LabelSnapshot, snapshot.LabelOwners)}
	}
	if slices.ContainsFunc(cm.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == ref.UID }) {
		return cm, false, nil
	}
	patch := client.MergeFromWithOptions(cm.DeepCopy(), client.MergeFromWithOptimisticLock{})
	cm.OwnerReferences = append(cm.OwnerReferences, ref)
	if err := c.Patch(ctx, cm, patch, client.FieldOwner(backupsv1alpha1.CoreFieldManager)); err != nil {
		return nil, false, fmt.Errorf("add %s %s as an owner of snapshot owners ConfigMap %s/%s: %w", ref.Kind, ref.Name, namespace, name, err)
	}
	return cm, false, nil
}

func ownerRef(kind, apiVersion, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid}
}

// labels are a snapshot object's: its role and, when it is a valid label
// value, the application's name.
func labels(app, role string) map[string]string {
	l := map[string]string{snapshot.LabelSnapshot: role}
	if len(validation.IsValidLabelValue(app)) == 0 {
		l[snapshot.LabelApplication] = app
	}
	return l
}

// foreignError is a ConfigMap under a snapshot's name that is not the
// core's: retrying does not help, the job fails with SnapshotFailed.
type foreignError struct{ msg string }

func (e *foreignError) Error() string { return e.msg }

func snapshotFailed(format string, args ...any) *outcome {
	return &outcome{reason: backupsv1alpha1.ReasonSnapshotFailed, failed: true, message: fmt.Sprintf(format, args...)}
}

func ptrTrue() *bool { t := true; return &t }
