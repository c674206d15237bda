package velerodriver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	"github.com/vmware-tanzu/velero/pkg/label"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// driverDataOf decodes a Backup's spec.driverData; a Backup without one
// (or not of this driver) is a *driver.RunError.
func driverDataOf(b *v1alpha1.Backup) (DriverData, error) {
	var dd DriverData
	if b.Spec.DriverData == nil || len(b.Spec.DriverData.Raw) == 0 {
		return dd, driver.Fail(v1alpha1.ReasonBackendFailed, "Backup %s/%s has no driverData naming its Velero backup", b.Namespace, b.Name)
	}
	if err := json.Unmarshal(b.Spec.DriverData.Raw, &dd); err != nil || dd.Backup == "" || dd.Namespace == "" {
		return dd, driver.Fail(v1alpha1.ReasonBackendFailed, "Backup %s/%s: driverData %s does not name a Velero backup", b.Namespace, b.Name, string(b.Spec.DriverData.Raw))
	}
	return dd, nil
}

// Reclaim implements driver.Reclaimer (contract k7, "Retention"): the
// Velero backup of run.Backup is deleted the way `velero backup delete`
// does it, with a DeleteBackupRequest (Velero then deletes the data in
// object storage, the volume snapshots, the restores of the backup and
// the Backup object). Done once the Velero Backup is gone; a request
// Velero processed with errors is an error naming them (the Backup gets
// Reclaim=False, ReclaimFailed) and is deleted, so the next attempt makes
// a new one.
func (d *Driver) Reclaim(ctx context.Context, run *driver.ReclaimRun) (driver.Outcome, error) {
	dd, err := driverDataOf(run.Backup)
	if err != nil {
		return driver.Outcome{}, err
	}
	vb := &velerov1.Backup{}
	err = run.Client.Get(ctx, types.NamespacedName{Namespace: dd.Namespace, Name: dd.Backup}, vb)
	if apierrors.IsNotFound(err) {
		// Gone: drop our request, if any (Velero keeps processed ones
		// for a day).
		dbr := &velerov1.DeleteBackupRequest{}
		dbr.Name, dbr.Namespace = objectName(run.Backup.Namespace, run.Backup.Name, "delete"), dd.Namespace
		if err := run.Client.Delete(ctx, dbr); client.IgnoreNotFound(err) != nil {
			return driver.Outcome{}, err
		}
		return driver.Outcome{Done: true}, nil
	}
	if err != nil {
		return driver.Outcome{}, err
	}
	dbr, err := d.requestDeletion(ctx, &run.Run, vb)
	if err != nil {
		return driver.Outcome{}, err
	}
	if dbr.Status.Phase == velerov1.DeleteBackupRequestPhaseProcessed && len(dbr.Status.Errors) > 0 {
		_ = client.IgnoreNotFound(run.Client.Delete(ctx, dbr))
		return driver.Outcome{}, fmt.Errorf("velero could not delete backup %s/%s: %s", vb.Namespace, vb.Name, strings.Join(dbr.Status.Errors, "; "))
	}
	return driver.Outcome{RequeueAfter: poll}, nil
}

// requestDeletion creates (or adopts) the run's DeleteBackupRequest for
// vb, labelled as `velero backup delete` labels it (velero.io/backup-name,
// velero.io/backup-uid), and returns it.
func (d *Driver) requestDeletion(ctx context.Context, run *driver.Run, vb *velerov1.Backup) (*velerov1.DeleteBackupRequest, error) {
	obj := run.Object()
	return d.requestDeletionNamed(ctx, run, vb, objectName(obj.GetNamespace(), obj.GetName(), "delete"))
}

// requestDeletionNamed is requestDeletion with the DeleteBackupRequest
// named name.
func (d *Driver) requestDeletionNamed(ctx context.Context, run *driver.Run, vb *velerov1.Backup, name string) (*velerov1.DeleteBackupRequest, error) {
	dbr := &velerov1.DeleteBackupRequest{}
	dbr.Name, dbr.Namespace = name, vb.Namespace
	dbr.Labels = map[string]string{
		velerov1.BackupNameLabel: label.GetValidName(vb.Name),
		velerov1.BackupUIDLabel:  string(vb.UID),
	}
	dbr.Spec.BackupName = vb.Name
	if _, err := run.CreateOrAdopt(ctx, dbr); err != nil {
		return nil, err
	}
	return dbr, nil
}
