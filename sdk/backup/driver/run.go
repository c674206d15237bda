package driver

import (
	"context"
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// AnnotationJob on a backend object names the object whose run created it,
// as "<Kind>/<namespace>/<name>" (e.g. "BackupJob/tenant-a/db-1"), so a
// change of the backend object wakes that run (Options.Watches). The run's
// UID is in the label v1alpha1.LabelRun.
const AnnotationJob = "backups.cozystack.io/job"

// Run is what every run shares: the job (or, for a reclaim, the Backup)
// and helpers that create backend objects the way contract k7
// ("Idempotency") requires.
type Run struct {
	// Driver is the driver's name; Identity this replica's claim holder.
	Driver, Identity string
	// Namespace is the driver's own namespace (the source of
	// ProjectSecret).
	Namespace string
	// Strategy is the job's bound strategy (a reclaim: the Backup's).
	Strategy v1alpha1.Strategy
	// Takeovers > 0 means a replica took this run over from a lost one:
	// objects created before are found and adopted by CreateOrAdopt.
	Takeovers int32
	// Client reads live from the API server and writes as the driver. It
	// is the driver's own, never cached.
	Client client.Client

	obj  client.Object
	kind string
	// rt is the replica running the run (nil in a Run made by hand): its
	// Options.Watches kinds are those whose objects CreateOrAdopt makes
	// owned by the job. A pointer keeps Run comparable.
	rt *replica
}

// Object returns the job (*v1alpha1.BackupJob or *v1alpha1.RestoreJob) or,
// for a reclaim, the *v1alpha1.Backup.
func (r *Run) Object() client.Object { return r.obj }

// UID is the run's identity: the value of the label v1alpha1.LabelRun on
// everything it creates.
func (r *Run) UID() types.UID { return r.obj.GetUID() }

// Parameters returns the strategy's parameters (nil when none).
func (r *Run) Parameters() *apiextensionsv1.JSON { return r.Strategy.Parameters }

// DecodeParameters decodes the parameters strictly into into
// (DecodeParameters).
func (r *Run) DecodeParameters(into any) error { return DecodeParameters(r.Strategy.Parameters, into) }

// ObjectName derives a backend object's name from the job's (ObjectName).
func (r *Run) ObjectName(suffix string) string { return ObjectName(r.obj.GetName(), suffix) }

// Labels returns the labels of the run's backend objects:
// backups.cozystack.io/run=<UID> and backups.cozystack.io/driver=<driver>.
func (r *Run) Labels() map[string]string {
	return map[string]string{v1alpha1.LabelRun: string(r.UID()), v1alpha1.LabelDriver: r.Driver}
}

// JobRef is the value of AnnotationJob for this run.
func (r *Run) JobRef() string {
	return fmt.Sprintf("%s/%s/%s", r.kind, r.obj.GetNamespace(), r.obj.GetName())
}

// CreateOrAdopt creates obj (its name derived with ObjectName) labelled
// with Labels and annotated with AnnotationJob, or adopts the object of
// that name created by this run before (a retry, a takeover, a lost
// response). obj is then the server's copy. adopted tells which. An object
// of a kind in Options.Watches created in the job's namespace also gets an
// ownerReference to the job (moved to the Backup when the backup
// succeeds; contract k7, "Deletion"). A same-named object that an earlier
// job of this name left (Orphan) is deleted and obj created in its place
// (while it is still being deleted: a transient error); any other
// same-named object not created by this run is a *ConflictError. Other
// errors are the API server's (transient).
func (r *Run) CreateOrAdopt(ctx context.Context, obj client.Object) (adopted bool, err error) {
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range r.Labels() {
		l[k] = v
	}
	obj.SetLabels(l)
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AnnotationJob] = r.JobRef()
	obj.SetAnnotations(a)
	if r.ownable(obj) {
		if err := r.addOwner(obj); err != nil {
			return false, err
		}
	}
	want := obj.DeepCopyObject().(client.Object)
	adopted, err = CreateOrAdopt(ctx, r.Client, r.UID(), obj)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		return adopted, err
	}
	// obj is the conflicting object as read.
	orphan, oerr := r.Orphan(ctx, obj)
	if oerr != nil {
		return false, oerr
	}
	if !orphan {
		return false, err
	}
	if obj.GetDeletionTimestamp() == nil {
		if err := r.removeOrphan(ctx, obj); err != nil {
			return false, err
		}
	}
	restore(obj, want)
	adopted, err = CreateOrAdopt(ctx, r.Client, r.UID(), obj)
	if errors.As(err, &ce) {
		return false, fmt.Errorf("%s, left by an earlier job of this name, is being deleted; retrying", ce.Object)
	}
	return adopted, err
}

// List lists the run's objects of list's kind (label
// backups.cozystack.io/run=<UID>), with further options.
func (r *Run) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	opts = append(opts, client.MatchingLabels{v1alpha1.LabelRun: string(r.UID())})
	return r.Client.List(ctx, list, opts...)
}

// ProjectSecret copies the Secret name from the driver's namespace into the
// job's namespace (the application's) and returns the copy's name
// (ProjectSecret).
func (r *Run) ProjectSecret(ctx context.Context, name string) (string, error) {
	return ProjectSecret(ctx, r.Client, r.Namespace, name, r.obj, r.Labels(), r.ObjectName("cred-"+name))
}

// BackupRun is one backup run.
type BackupRun struct {
	Run
	// Job is the BackupJob as last read (do not change it).
	Job *v1alpha1.BackupJob
}

// RestoreRun is one restore run.
type RestoreRun struct {
	Run
	// Job is the RestoreJob as last read.
	Job *v1alpha1.RestoreJob
	// Backup is the Backup restored (its spec.driverData is what
	// ReconcileBackup returned as Outcome.DriverData).
	Backup *v1alpha1.Backup
	// Target is the application restored into, in Job's namespace: the
	// Backup's own application (mode InPlace) or the new application
	// (mode NewApplication, created by the core).
	Target v1alpha1.ApplicationRef
}

// ReclaimRun is the deletion of one Backup's backend data. Its UID (the
// run label of what it creates) is the Backup's.
type ReclaimRun struct {
	Run
	// Backup is the Backup being deleted.
	Backup *v1alpha1.Backup
}
