package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// backupOps runs BackupJobs.
type backupOps struct{ rt *replica }

func (backupOps) kind() string             { return "BackupJob" }
func (backupOps) operation() Operation     { return OperationBackup }
func (backupOps) newObject() client.Object { return &v1alpha1.BackupJob{} }
func (backupOps) status(o client.Object) *v1alpha1.JobStatus {
	return &o.(*v1alpha1.BackupJob).Status.JobStatus
}
func (backupOps) backupName(o client.Object) string    { return o.(*v1alpha1.BackupJob).Status.BackupName }
func (backupOps) cancelRequested(o client.Object) bool { return o.(*v1alpha1.BackupJob).Spec.Cancel }

func (b backupOps) reconcile(ctx context.Context, o client.Object, run Run) (Outcome, error) {
	return b.rt.drv.ReconcileBackup(ctx, &BackupRun{Run: run, Job: o.(*v1alpha1.BackupJob)})
}

func (b backupOps) cancel(ctx context.Context, o client.Object, run Run) error {
	return b.rt.drv.CancelBackup(ctx, &BackupRun{Run: run, Job: o.(*v1alpha1.BackupJob)})
}

// succeed creates the Backup (contract k7, "Runs"): named as the job,
// labelled with the run, the driver, the plan and the Plan's UID from
// status.planUID, spec from the job's
// binding and status and out.DriverData; with the finalizer
// backups.cozystack.io/reclaim when the driver has Reclaim. An existing
// Backup of this run (a retry after a lost status write) is adopted.
func (b backupOps) succeed(ctx context.Context, o client.Object, run Run, out Outcome) (string, error) {
	job := o.(*v1alpha1.BackupJob)
	o2 := b.rt.opts
	bk := &v1alpha1.Backup{}
	bk.Name, bk.Namespace = job.Name, job.Namespace
	bk.Labels = map[string]string{v1alpha1.LabelDriver: o2.Name}
	plan := job.Labels[v1alpha1.LabelPlan]
	if plan != "" {
		bk.Labels[v1alpha1.LabelPlan] = plan
	}
	// The Plan's UID as the core recorded it in the job's status (never
	// a label a tenant may write): what the Plan's retention counts.
	if uid := job.Status.PlanUID; uid != "" {
		bk.Labels[v1alpha1.LabelPlanUID] = string(uid)
	}
	reclaim := slices.Contains(o2.Capabilities, v1alpha1.CapabilityReclaim)
	if reclaim {
		bk.Finalizers = []string{v1alpha1.BackupFinalizer}
	}
	data, err := driverData(out.DriverData)
	if err != nil {
		return "", Fail(v1alpha1.ReasonBackendFailed, "driver data of the backup: %v", err)
	}
	overlay, err := driverData(out.RestoreOverlay)
	if err != nil {
		return "", Fail(v1alpha1.ReasonBackendFailed, "restore overlay of the backup: %v", err)
	}
	bk.Spec = v1alpha1.BackupSpec{
		ApplicationRef:  job.Spec.ApplicationRef,
		DriverRef:       job.Status.Binding.DriverRef,
		Strategy:        job.Status.Binding.Strategy,
		BackupJobName:   job.Name,
		BackupClassName: job.Status.Binding.BackupClassName,
		PlanName:        plan,
		TakenAt:         metav1.NewTime(time.Now()),
		// The reference only (contract k7, "Snapshots"); a job an
		// earlier release bound keeps its inline values.
		ApplicationSnapshotRef: job.Status.ApplicationSnapshotRef.DeepCopy(),
		ApplicationSnapshot:    job.Status.ApplicationSnapshot.DeepCopy(),
		DriverData:             data,
		RestoreOverlay:         overlay,
	}
	if _, err := CreateOrAdopt(ctx, run.Client, run.UID(), bk); err != nil {
		return "", err
	}
	if reclaim && !slices.Contains(bk.Finalizers, v1alpha1.BackupFinalizer) {
		patch := client.MergeFromWithOptions(bk.DeepCopy(), client.MergeFromWithOptimisticLock{})
		bk.Finalizers = append(bk.Finalizers, v1alpha1.BackupFinalizer)
		if err := run.Client.Patch(ctx, bk, patch); err != nil {
			return "", err
		}
	}
	// The Backup keeps the data: what the job owned is the Backup's now,
	// so deleting the finished job leaves it (contract k7, "Deletion").
	if err := b.rt.transferOwnership(ctx, &run, bk); err != nil {
		return "", err
	}
	if !apimeta.IsStatusConditionTrue(bk.Status.Conditions, v1alpha1.ConditionReady) {
		st := backupStatus{Conditions: apply.Conditions(bk.Status.Conditions, time.Now(),
			apply.Condition(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, 0, "taken by BackupJob %s", job.Name))}
		if err := apply.Status(ctx, run.Client, bk, st, v1alpha1.DriverFieldManager(o2.Name)); err != nil {
			return "", err
		}
	}
	return bk.Name, nil
}

// backupStatus is the driver's intent for a Backup's status.
type backupStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// driverData encodes v as a JSON object (nil stays nil).
func driverData(v any) (*apiextensionsv1.JSON, error) {
	if v == nil {
		return nil, nil
	}
	if j, ok := v.(*apiextensionsv1.JSON); ok {
		return j.DeepCopy(), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("must be a JSON object: %w", err)
	}
	return &apiextensionsv1.JSON{Raw: raw}, nil
}
