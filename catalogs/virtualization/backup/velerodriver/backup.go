package velerodriver

import (
	"context"
	"fmt"
	"strings"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// AnnotationTTL on a Velero Backup says where its spec.ttl comes from
// (TTLDecision), and any mismatch with the retention.
const AnnotationTTL = "backups.cozystack.io/velero-ttl"

// poll is how soon a run on a Velero object is looked at again (the SDK
// caps it at the claim's renewal).
const poll = 5 * time.Second

// DriverData is the Backup's spec.driverData: where its Velero backup is.
type DriverData struct {
	// Namespace and Backup name the Velero Backup.
	Namespace string `json:"namespace"`
	Backup    string `json:"backup"`
	// StorageLocation is its BackupStorageLocation; TTL its spec.ttl.
	StorageLocation string `json:"storageLocation"`
	TTL             string `json:"ttl"`
	// Phase is its phase when the run ended (Completed or
	// PartiallyFailed); Degraded the item counts when PartiallyFailed.
	Phase    velerov1.BackupPhase `json:"phase"`
	Degraded string               `json:"degraded,omitempty"`
}

// veleroBackup builds the Velero Backup of run: the application's objects
// (selectors) in its namespace, at the parameters' storage location, with
// the TTL decided by decideTTL.
func (d *Driver) veleroBackup(run *driver.BackupRun, p *Parameters, sel []*metav1.LabelSelector, ttl TTLDecision) *velerov1.Backup {
	job := run.Job
	vb := &velerov1.Backup{}
	vb.Name, vb.Namespace = objectName(job.Namespace, job.Name, "backup"), d.namespace
	vb.Annotations = map[string]string{AnnotationTTL: ttl.message()}
	vb.Spec = velerov1.BackupSpec{
		IncludedNamespaces:       []string{job.Namespace},
		OrLabelSelectors:         sel,
		StorageLocation:          p.StorageLocation,
		VolumeSnapshotLocations:  p.VolumeSnapshotLocations,
		SnapshotVolumes:          p.SnapshotVolumes,
		SnapshotMoveData:         p.SnapshotMoveData,
		DefaultVolumesToFsBackup: p.DefaultVolumesToFsBackup,
		TTL:                      metav1.Duration{Duration: ttl.TTL},
		// The release's objects only; PersistentVolumes of included
		// claims come along (Velero's default for nil).
		IncludeClusterResources: nil,
	}
	return vb
}

// ReconcileBackup implements driver.Driver: it creates (or adopts) the
// Velero Backup and maps its phase (phases.go).
func (d *Driver) ReconcileBackup(ctx context.Context, run *driver.BackupRun) (driver.Outcome, error) {
	p, err := decodeParameters(run.Strategy)
	if err != nil {
		return driver.Outcome{}, err
	}
	job := run.Job
	// Checks the parameters before anything is read or created.
	if _, err := selectors(job.Spec.ApplicationRef, nil, p); err != nil {
		return driver.Outcome{}, err
	}
	vb := &velerov1.Backup{}
	key := types.NamespacedName{Namespace: d.namespace, Name: objectName(job.Namespace, job.Name, "backup")}
	if err := run.Client.Get(ctx, key, vb); apierrors.IsNotFound(err) {
		// The application's spec (the snapshot the core captured, read
		// through its reference and verified) names a VMInstance's
		// disks; it is read once, when the Velero Backup is made.
		var snap *apiextensionsv1.JSON
		if job.Spec.ApplicationRef.Kind == "VMInstance" {
			if snap, err = run.Snapshot(ctx); err != nil {
				return driver.Outcome{}, err
			}
		}
		sel, err := selectors(job.Spec.ApplicationRef, snap, p)
		if err != nil {
			return driver.Outcome{}, err
		}
		ttl, err := decideTTL(ctx, run.Client, job, p)
		if err != nil {
			return driver.Outcome{}, err
		}
		vb = d.veleroBackup(run, p, sel, ttl)
		if _, err := run.CreateOrAdopt(ctx, vb); err != nil {
			return driver.Outcome{}, err
		}
	} else if err != nil {
		return driver.Outcome{}, err
	} else if found := vb.Labels[v1alpha1.LabelRun]; found != string(run.UID()) {
		// What an earlier job of this name left (deleted without its
		// cleanup) is removed, not a conflict (contract k7, "Deletion").
		orphan, err := run.Orphan(ctx, vb)
		if err != nil {
			return driver.Outcome{}, err
		}
		if !orphan {
			return driver.Outcome{}, &driver.ConflictError{Object: fmt.Sprintf("Backup %s/%s", key.Namespace, key.Name), Run: string(run.UID()), Found: found}
		}
		return d.removeOrphan(ctx, &run.Run, vb)
	}
	desc := fmt.Sprintf("Velero Backup %s/%s", vb.Namespace, vb.Name)
	state, known := BackupState(vb.Status.Phase)
	counts := backupCounts(vb)
	switch state {
	case StateWaiting:
		return d.waiting(vb.CreationTimestamp, p, desc, string(vb.Status.Phase), known, vb.Annotations[AnnotationTTL])
	case StateRunning:
		return driver.Outcome{RequeueAfter: poll, Progress: &driver.Progress{Percent: backupPercent(vb),
			Message: fmt.Sprintf("%s %s: %s; %s", desc, vb.Status.Phase, counts, vb.Annotations[AnnotationTTL])}}, nil
	case StateInvalid:
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonInvalidParameters, "%s FailedValidation: %s: fix the BackupClass's parameters (or Velero's storage location), then run a new job",
			desc, strings.Join(vb.Status.ValidationErrors, "; "))
	case StateFailed:
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed, "%s %s: %s (%s); see `velero backup logs %s -n %s`",
			desc, vb.Status.Phase, orNone(vb.Status.FailureReason), counts, vb.Name, vb.Namespace)
	}
	data := DriverData{Namespace: vb.Namespace, Backup: vb.Name, StorageLocation: vb.Spec.StorageLocation,
		TTL: vb.Spec.TTL.Duration.String(), Phase: vb.Status.Phase}
	if state == StateDegraded {
		data.Degraded = degradedMessage(desc, counts)
		// The counts go to the job's progress first (the SDK's final
		// message is its own), then the run ends; the Verifier puts
		// Degraded=True on the Backup.
		if job.Status.Progress == nil || job.Status.Progress.Message != data.Degraded {
			return driver.Outcome{RequeueAfter: time.Millisecond, Progress: &driver.Progress{Percent: ptr.To[int32](100), Message: data.Degraded}}, nil
		}
		d.verifier.Kick()
	}
	return driver.Outcome{Done: true, DriverData: data}, nil
}

// waiting maps a phase in which Velero has not started: bounded by the
// parameters' startTimeout from the object's creation.
func (d *Driver) waiting(created metav1.Time, p *Parameters, desc, phase string, known bool, ttl string) (driver.Outcome, error) {
	if phase == "" {
		phase = "no phase yet"
	}
	if !known {
		phase = fmt.Sprintf("unknown phase %q", phase)
	}
	if !created.IsZero() && d.now().Sub(created.Time) > p.startTimeout() {
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed,
			"%s still in %s after %s (startTimeout): is Velero running in namespace %s? Check `velero get backup-locations` and the velero Deployment, then run a new job",
			desc, phase, p.startTimeout(), d.namespace)
	}
	msg := fmt.Sprintf("%s: %s, waiting for Velero to start it", desc, phase)
	if ttl != "" {
		msg += "; " + ttl
	}
	return driver.Outcome{RequeueAfter: poll, Progress: &driver.Progress{Message: msg}}, nil
}

// CancelBackup implements driver.Driver: a Velero Backup not started yet
// is deleted; one Velero works on cannot be stopped, so the cancel waits
// (a transient error) until it ends, then asks Velero to delete it and its
// data (a DeleteBackupRequest, as `velero backup delete` does).
func (d *Driver) CancelBackup(ctx context.Context, run *driver.BackupRun) error {
	return d.removeBackup(ctx, &run.Run, types.NamespacedName{Namespace: d.namespace, Name: objectName(run.Job.Namespace, run.Job.Name, "backup")})
}

// removeBackup removes the Velero Backup key of run; nil when it is gone or
// its deletion is requested.
func (d *Driver) removeBackup(ctx context.Context, run *driver.Run, key types.NamespacedName) error {
	vb := &velerov1.Backup{}
	if err := run.Client.Get(ctx, key, vb); err != nil {
		return client.IgnoreNotFound(err)
	}
	if vb.Labels[v1alpha1.LabelRun] != string(run.UID()) || vb.DeletionTimestamp != nil {
		return nil
	}
	state, _ := BackupState(vb.Status.Phase)
	switch state {
	case StateWaiting, StateInvalid:
		// Velero holds no data of it yet.
		return client.IgnoreNotFound(run.Client.Delete(ctx, vb))
	case StateRunning:
		return fmt.Errorf("velero Backup %s/%s is %s and cannot be stopped: its deletion waits for it to end", vb.Namespace, vb.Name, vb.Status.Phase)
	}
	_, err := d.requestDeletion(ctx, run, vb)
	return err
}

// removeOrphan removes vb, a Velero Backup an earlier job of the run's
// name left (driver.Run.Orphan), and reports the run waiting: one not
// started yet or refused by validation holds no data and is deleted; a
// running one is waited for (Velero cannot stop it); any other is deleted
// with its data through a DeleteBackupRequest of its own name
// ("<job>-orphan-delete"), which Velero processes. The next call creates
// the run's Backup once the name is free.
func (d *Driver) removeOrphan(ctx context.Context, run *driver.Run, vb *velerov1.Backup) (driver.Outcome, error) {
	desc := fmt.Sprintf("Velero Backup %s/%s, left by an earlier job of this name", vb.Namespace, vb.Name)
	wait := func(what string) (driver.Outcome, error) {
		return driver.Outcome{RequeueAfter: poll, Progress: &driver.Progress{Message: desc + ": " + what}}, nil
	}
	if vb.DeletionTimestamp != nil {
		return wait("being deleted")
	}
	switch state, _ := BackupState(vb.Status.Phase); state {
	case StateWaiting, StateInvalid:
		uid := vb.UID
		if err := run.Client.Delete(ctx, vb, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return driver.Outcome{}, err
		}
		return driver.Outcome{RequeueAfter: time.Millisecond, Progress: &driver.Progress{Message: desc + ": deleted"}}, nil
	case StateRunning:
		return wait(string(vb.Status.Phase) + "; waiting for it to end before deleting it")
	}
	obj := run.Object()
	if _, err := d.requestDeletionNamed(ctx, run, vb, objectName(obj.GetNamespace(), obj.GetName(), "orphan-delete")); err != nil {
		return driver.Outcome{}, err
	}
	return wait("deletion requested from Velero")
}

func backupCounts(vb *velerov1.Backup) string {
	s := vb.Status
	total, done := 0, 0
	if s.Progress != nil {
		total, done = s.Progress.TotalItems, s.Progress.ItemsBackedUp
	}
	return fmt.Sprintf("%d of %d items backed up, %d errors, %d warnings", done, total, s.Errors, s.Warnings)
}

func backupPercent(vb *velerov1.Backup) *int32 {
	if p := vb.Status.Progress; p != nil && p.TotalItems > 0 {
		return ptr.To(int32(100 * p.ItemsBackedUp / p.TotalItems))
	}
	return nil
}

func degradedMessage(desc, counts string) string {
	return fmt.Sprintf("%s PartiallyFailed: %s; the backup is usable but incomplete (Degraded)", desc, counts)
}

func orNone(s string) string {
	if s == "" {
		return "no failure reason given"
	}
	return s
}
