package restore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/snapshot"
)

// AppsGroupVersion is the application API the targets are read and
// created through (cozystack-api).
var AppsGroupVersion = schema.GroupVersion{Group: "apps.cozystack.io", Version: "v1alpha1"}

// target is where a job restores to: the application, its resource, and,
// for mode NewApplication when it does not exist yet, the object to create.
type target struct {
	ref    backupsv1alpha1.ApplicationRef
	gvr    schema.GroupVersionResource
	create *unstructured.Unstructured
	// uid is the UID of the application the core created for the job
	// (mode NewApplication), once it exists: recorded in status.targetUID,
	// it is what a failed job deletes (removeTarget).
	uid types.UID
}

// outcome of one step of a reconcile: nothing (go on), a wait (the
// DriverBound=False verdict, retried and bounded by the driver wait), or
// a failure (the Ready=False verdict, terminal).
type outcome struct {
	wait *verdict
	fail *verdict
}

func waiting(reason, format string, args ...any) outcome {
	return outcome{wait: &verdict{metav1.ConditionFalse, reason, fmt.Sprintf(format, args...)}}
}

func failed(reason, format string, args ...any) outcome {
	return outcome{fail: &verdict{metav1.ConditionFalse, reason, fmt.Sprintf(format, args...)}}
}

func (o outcome) done() bool { return o.wait == nil && o.fail == nil }

// resourceFor returns the resource serving application kind k, from the
// ApplicationDefinition whose spec.application.kind is k.Kind (the one
// cozystack-api reports Served, when several name it), and whether there
// is one.
func resourceFor(ctx context.Context, r client.Reader, k backupsv1alpha1.ApplicationKind) (schema.GroupVersionResource, bool, error) {
	if k.APIGroup != AppsGroupVersion.Group {
		return schema.GroupVersionResource{}, false, nil
	}
	var ads v1alpha1.ApplicationDefinitionList
	if err := r.List(ctx, &ads); err != nil {
		return schema.GroupVersionResource{}, false, err
	}
	plural := ""
	for _, ad := range ads.Items {
		if ad.Spec.Application.Kind != k.Kind || ad.DeletionTimestamp != nil {
			continue
		}
		if apimeta.IsStatusConditionTrue(ad.Status.Conditions, "Served") && ad.Status.Resource != "" {
			plural = ad.Status.Resource
			break
		}
		if plural == "" {
			plural = ad.Spec.Application.Plural
		}
	}
	if plural == "" {
		return schema.GroupVersionResource{}, false, nil
	}
	return AppsGroupVersion.WithResource(plural), true, nil
}

// resolveTarget finds where job restores Backup b to. InPlace: b's
// application, which must exist in the job's namespace (the caller has
// refused InPlace across namespaces). NewApplication:
// target.applicationName in the job's namespace, adopted when it carries
// LabelRestoreJob with the job's UID, refused (TargetExists) when it
// exists without, or to be created from b's snapshot. The source
// application is never read. Errors are the API's.
func resolveTarget(ctx context.Context, r client.Reader, apps dynamic.Interface, job *backupsv1alpha1.RestoreJob, b *backupsv1alpha1.Backup) (*target, outcome, error) {
	kind := b.Spec.ApplicationRef.ApplicationKind
	gvr, ok, err := resourceFor(ctx, r, kind)
	if err != nil {
		return nil, outcome{}, err
	}
	if !ok {
		return nil, waiting(backupsv1alpha1.ReasonApplicationNotFound,
			"no ApplicationDefinition serves application kind %s (%s): install the catalog that ships it; the restore waits", kind.Kind, kind.APIGroup), nil
	}
	t := &target{gvr: gvr, ref: backupsv1alpha1.ApplicationRef{ApplicationKind: kind, Name: b.Spec.ApplicationRef.Name}}
	if job.Spec.Target.Mode == backupsv1alpha1.RestoreNewApplication {
		t.ref.Name = job.Spec.Target.ApplicationName
	}
	cur, err := apps.Resource(gvr).Namespace(job.Namespace).Get(ctx, t.ref.Name, metav1.GetOptions{})
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return nil, outcome{}, fmt.Errorf("get %s %s/%s: %w", kind.Kind, job.Namespace, t.ref.Name, err)
	case job.Spec.Target.Mode != backupsv1alpha1.RestoreNewApplication:
		if err != nil {
			return nil, waiting(backupsv1alpha1.ReasonApplicationNotFound,
				"the application %s %s of Backup %s no longer exists in namespace %s: create it again, or restore with target.mode NewApplication and target.applicationName %s; the restore waits",
				kind.Kind, t.ref.Name, b.Name, job.Namespace, t.ref.Name), nil
		}
		return t, outcome{}, nil
	case err == nil:
		if o := adoptable(job, cur); !o.done() {
			return nil, o, nil
		}
		t.uid = createdUID(job, cur)
		return t, outcome{}, nil
	}
	// The captured spec, read through its reference and verified against
	// its digest (contract k7, "Snapshots"); a Backup an earlier release
	// took carries it inline.
	snap, err := snapshot.ForBackup(ctx, r, b)
	var tampered *snapshot.IntegrityError
	switch {
	case errors.As(err, &tampered):
		return nil, failed(backupsv1alpha1.ReasonSnapshotTampered,
			"Backup %s/%s: %v; nothing was created", b.Namespace, b.Name, err), nil
	case apierrors.IsNotFound(err):
		return nil, failed(backupsv1alpha1.ReasonSnapshotMissing,
			"Backup %s/%s: %v, or with target.mode InPlace", b.Namespace, b.Name, err), nil
	case err != nil:
		return nil, outcome{}, err
	case snap == nil:
		return nil, failed(backupsv1alpha1.ReasonSnapshotMissing,
			"Backup %s/%s holds no application snapshot to create %s %s from: restore it with target.mode InPlace, or from another Backup", b.Namespace, b.Name, kind.Kind, t.ref.Name), nil
	}
	raw := snap.Raw
	if b.Spec.RestoreOverlay != nil && len(b.Spec.RestoreOverlay.Raw) > 0 {
		// The driver's overlay (contract k7, "Restores"), e.g. values
		// that make the chart bootstrap from this backup.
		merged, err := jsonpatch.MergePatch(raw, b.Spec.RestoreOverlay.Raw)
		if err != nil {
			return nil, failed(backupsv1alpha1.ReasonTargetInvalid,
				"Backup %s/%s's restoreOverlay does not apply to its applicationSnapshot (%v): the driver %s wrote a bad overlay; restore it with target.mode InPlace",
				b.Namespace, b.Name, err, b.Spec.DriverRef.Name), nil
		}
		raw = merged
	}
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, failed(backupsv1alpha1.ReasonSnapshotMissing,
			"Backup %s/%s's applicationSnapshot is not a JSON object (%v): restore it with target.mode InPlace, or from another Backup", b.Namespace, b.Name, err), nil
	}
	t.create = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": AppsGroupVersion.String(),
		"kind":       kind.Kind,
		"metadata": map[string]any{
			"name":      t.ref.Name,
			"namespace": job.Namespace,
			"labels":    map[string]any{LabelRestoreJob: string(job.UID)},
		},
		"spec": spec,
	}}
	return t, outcome{}, nil
}

// adoptable returns nothing when application cur was created by job, or
// the TargetExists failure.
func adoptable(job *backupsv1alpha1.RestoreJob, cur *unstructured.Unstructured) outcome {
	if cur.GetLabels()[LabelRestoreJob] == string(job.UID) {
		return outcome{}
	}
	return failed(backupsv1alpha1.ReasonTargetExists,
		"the application %s %s already exists in namespace %s and was not created by this RestoreJob: create a new RestoreJob with another target.applicationName, or delete the application first",
		cur.GetKind(), cur.GetName(), job.Namespace)
}

// createdUID is the UID of cur, an application labelled with job's UID,
// when the core created it for job: it was created at or after the job
// (the label is a tenant's to write, so an application that existed
// before the job is never taken for the core's, and never deleted as
// such).
func createdUID(job *backupsv1alpha1.RestoreJob, cur *unstructured.Unstructured) types.UID {
	if created := cur.GetCreationTimestamp(); created.Before(&job.CreationTimestamp) {
		return ""
	}
	return cur.GetUID()
}

// createTarget creates t.create through the application API as the core,
// adopting it when a retry finds its own, and sets t.uid. A refusal of
// the object (Invalid, BadRequest) fails the job with TargetInvalid;
// other errors are returned, to retry.
func createTarget(ctx context.Context, apps dynamic.Interface, job *backupsv1alpha1.RestoreJob, t *target) (outcome, error) {
	res := apps.Resource(t.gvr).Namespace(job.Namespace)
	// Strict: a key of the snapshot the kind's schema no longer declares
	// (a catalog upgrade renamed or removed it) fails the job naming the
	// field, where the default directive would drop the value with only a
	// warning nobody reads (K4, "Stored values").
	made, err := res.Create(ctx, t.create, metav1.CreateOptions{FieldManager: backupsv1alpha1.CoreFieldManager, FieldValidation: metav1.FieldValidationStrict})
	switch {
	case err == nil:
		t.uid = made.GetUID()
		return outcome{}, nil
	case apierrors.IsAlreadyExists(err):
		cur, err := res.Get(ctx, t.ref.Name, metav1.GetOptions{})
		if err != nil {
			return outcome{}, fmt.Errorf("get %s %s/%s: %w", t.ref.Kind, job.Namespace, t.ref.Name, err)
		}
		o := adoptable(job, cur)
		if o.done() {
			t.uid = createdUID(job, cur)
		}
		return o, nil
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		return failed(backupsv1alpha1.ReasonTargetInvalid,
			"the application API refused %s %s built from Backup %s/%s's snapshot: %v; a key or value the kind's current schema no longer accepts (the catalog changed it since the backup) is refused, never dropped: the catalog's author restores it for a version (\"deprecated\": true), or the tenant restores from a newer backup",
			t.ref.Kind, t.ref.Name, backupNamespace(job), job.Spec.BackupRef.Name, err), nil
	}
	return outcome{}, fmt.Errorf("create %s %s/%s: %w", t.ref.Kind, job.Namespace, t.ref.Name, err)
}

// removeTarget deletes the application the core created for job
// (status.targetUID) once job ended Failed or Cancelled, so it does not
// stay behind, Ready and empty, and a retry into the same name is not
// refused TargetExists. Only the application of that UID goes (a UID
// precondition): one created under the name meanwhile, or one that
// existed before the job, is never touched. It reports whether it deleted
// one; gone already is no error. Other errors are the API's.
func removeTarget(ctx context.Context, r client.Reader, apps dynamic.Interface, job *backupsv1alpha1.RestoreJob) (bool, error) {
	ref, uid := job.Status.TargetRef, job.Status.TargetUID
	if ref == nil || uid == "" || job.Spec.Target.Mode != backupsv1alpha1.RestoreNewApplication {
		return false, nil
	}
	gvr, ok, err := resourceFor(ctx, r, ref.ApplicationKind)
	if err != nil || !ok {
		return false, err
	}
	res := apps.Resource(gvr).Namespace(job.Namespace)
	cur, err := res.Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("get %s %s/%s: %w", ref.Kind, job.Namespace, ref.Name, err)
	case cur.GetUID() != uid || cur.GetDeletionTimestamp() != nil:
		return false, nil
	}
	err = res.Delete(ctx, ref.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Gone, or replaced by another of the name: not ours to delete.
		return false, nil
	}
	return false, fmt.Errorf("delete %s %s/%s, created by the failed RestoreJob %s: %w", ref.Kind, job.Namespace, ref.Name, job.Name, err)
}
