package velerodriver

import (
	"context"
	"fmt"
	"strings"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// diskResources are what a NewApplication restore brings back: the disks'
// DataVolumes, their claims and volumes (doc.go, "Restores").
var diskResources = []string{"datavolumes.cdi.kubevirt.io", "persistentvolumeclaims", "persistentvolumes"}

// veleroRestore builds the Velero Restore of run (doc.go, "Restores").
func (d *Driver) veleroRestore(run *driver.RestoreRun, p *Parameters, dd DriverData) *velerov1.Restore {
	job := run.Job
	vr := &velerov1.Restore{}
	vr.Name, vr.Namespace = objectName(job.Namespace, job.Name, "restore"), d.namespace
	src := run.Backup.Namespace
	vr.Spec = velerov1.RestoreSpec{
		BackupName:             dd.Backup,
		IncludedNamespaces:     []string{src},
		RestorePVs:             ptr.To(true),
		ExistingResourcePolicy: velerov1.PolicyTypeNone,
	}
	if src != job.Namespace {
		vr.Spec.NamespaceMapping = map[string]string{src: job.Namespace}
	}
	if job.Spec.Target.Mode == v1alpha1.RestoreNewApplication {
		vr.Spec.IncludedResources = diskResources
	} else if p.Restore.ExistingResourcePolicy != "" {
		vr.Spec.ExistingResourcePolicy = p.Restore.ExistingResourcePolicy
	}
	return vr
}

// ReconcileRestore implements driver.Driver: it creates (or adopts) the
// Velero Restore from the Backup's Velero backup and maps its phase.
func (d *Driver) ReconcileRestore(ctx context.Context, run *driver.RestoreRun) (driver.Outcome, error) {
	p, err := decodeParameters(run.Strategy)
	if err != nil {
		return driver.Outcome{}, err
	}
	dd, err := driverDataOf(run.Backup)
	if err != nil {
		return driver.Outcome{}, err
	}
	if dd.Namespace != d.namespace {
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed, "Backup %s/%s is in Velero's namespace %s, this driver uses %s", run.Backup.Namespace, run.Backup.Name, dd.Namespace, d.namespace)
	}
	vr := &velerov1.Restore{}
	key := types.NamespacedName{Namespace: d.namespace, Name: objectName(run.Job.Namespace, run.Job.Name, "restore")}
	if err := run.Client.Get(ctx, key, vr); apierrors.IsNotFound(err) {
		// Velero's backup must still exist (Verify): else the restore
		// could never start.
		if err := run.Client.Get(ctx, types.NamespacedName{Namespace: dd.Namespace, Name: dd.Backup}, &velerov1.Backup{}); apierrors.IsNotFound(err) {
			return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed, "the Velero backup %s/%s of Backup %s/%s is gone (ArtifactMissing): restore from another Backup",
				dd.Namespace, dd.Backup, run.Backup.Namespace, run.Backup.Name)
		} else if err != nil {
			return driver.Outcome{}, err
		}
		vr = d.veleroRestore(run, p, dd)
		if _, err := run.CreateOrAdopt(ctx, vr); err != nil {
			return driver.Outcome{}, err
		}
	} else if err != nil {
		return driver.Outcome{}, err
	} else if found := vr.Labels[v1alpha1.LabelRun]; found != string(run.UID()) {
		return driver.Outcome{}, &driver.ConflictError{Object: fmt.Sprintf("Restore %s/%s", key.Namespace, key.Name), Run: string(run.UID()), Found: found}
	}
	desc := fmt.Sprintf("Velero Restore %s/%s of %s into %s %s", vr.Namespace, vr.Name, dd.Backup, run.Target.Kind, run.Target.Name)
	state, known := RestoreState(vr.Status.Phase)
	counts := restoreCounts(vr)
	switch state {
	case StateWaiting:
		return d.waiting(vr.CreationTimestamp, p, desc, string(vr.Status.Phase), known, "")
	case StateRunning:
		return driver.Outcome{RequeueAfter: poll, Progress: &driver.Progress{Percent: restorePercent(vr),
			Message: fmt.Sprintf("%s %s: %s", desc, vr.Status.Phase, counts)}}, nil
	case StateInvalid:
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonInvalidParameters, "%s FailedValidation: %s", desc, strings.Join(vr.Status.ValidationErrors, "; "))
	case StateFailed:
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed, "%s %s: %s (%s); see `velero restore logs %s -n %s`",
			desc, vr.Status.Phase, orNone(vr.Status.FailureReason), counts, vr.Name, vr.Namespace)
	case StateDegraded:
		msg := fmt.Sprintf("%s PartiallyFailed: %s; restored what Velero could (Degraded)", desc, counts)
		if run.Job.Status.Progress == nil || run.Job.Status.Progress.Message != msg {
			return driver.Outcome{RequeueAfter: time.Millisecond, Progress: &driver.Progress{Percent: ptr.To[int32](100), Message: msg}}, nil
		}
	}
	return driver.Outcome{Done: true}, nil
}

// CancelRestore implements driver.Driver: a Velero Restore not started is
// deleted; a running one cannot be stopped, so the cancel waits for it to
// end, then deletes the Restore object (what it restored stays: Velero
// never undoes a restore).
func (d *Driver) CancelRestore(ctx context.Context, run *driver.RestoreRun) error {
	vr := &velerov1.Restore{}
	key := types.NamespacedName{Namespace: d.namespace, Name: objectName(run.Job.Namespace, run.Job.Name, "restore")}
	if err := run.Client.Get(ctx, key, vr); err != nil {
		return client.IgnoreNotFound(err)
	}
	if vr.Labels[v1alpha1.LabelRun] != string(run.UID()) || vr.DeletionTimestamp != nil {
		return nil
	}
	if state, _ := RestoreState(vr.Status.Phase); state == StateRunning {
		return fmt.Errorf("velero Restore %s/%s is %s and cannot be stopped: its deletion waits for it to end", vr.Namespace, vr.Name, vr.Status.Phase)
	}
	return client.IgnoreNotFound(run.Client.Delete(ctx, vr))
}

func restoreCounts(vr *velerov1.Restore) string {
	s := vr.Status
	total, done := 0, 0
	if s.Progress != nil {
		total, done = s.Progress.TotalItems, s.Progress.ItemsRestored
	}
	return fmt.Sprintf("%d of %d items restored, %d errors, %d warnings", done, total, s.Errors, s.Warnings)
}

func restorePercent(vr *velerov1.Restore) *int32 {
	if p := vr.Status.Progress; p != nil && p.TotalItems > 0 {
		return ptr.To(int32(100 * p.ItemsRestored / p.TotalItems))
	}
	return nil
}
