package velerodriver_test

import (
	"context"
	"testing"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/virtualization/backup/velerodriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// A completed Velero Backup that an earlier BackupJob of the same name
// left (deleted without its cleanup: an older driver, a finalizer removed
// by hand) holds data with Velero's TTL: the new job neither adopts it nor
// fails on it, but has Velero delete it with its data (a
// DeleteBackupRequest "<namespace>.<job>-orphan-delete") and, once it is
// gone, takes its own backup (contract k7, "Deletion"). The test
// processes the request as Velero would.
func TestLeftoverWithDataIsDeletedThroughVelero(t *testing.T) {
	c := need(t)
	ns := namespace(t, c)
	ctx := context.Background()
	startDriver(t, options("orphan-0", 6*time.Second))

	left := &velerov1.Backup{}
	left.Name, left.Namespace = driver.ObjectName(ns+".again", "backup"), veleroNamespace
	left.Labels = map[string]string{v1alpha1.LabelRun: "00000000-0000-4000-8000-0000000001d5", v1alpha1.LabelDriver: velerodriver.DefaultName}
	left.Annotations = map[string]string{driver.AnnotationJob: "BackupJob/" + ns + "/again"}
	if err := c.Create(ctx, left); err != nil {
		t.Fatal(err)
	}
	if err := setBackupStatus(ctx, c, client.ObjectKeyFromObject(left), completed(3)); err != nil {
		t.Fatal(err)
	}

	job := backupJob(t, c, ns, "again", "", params(t, map[string]any{"storageLocation": "default"}))
	dbr := &velerov1.DeleteBackupRequest{}
	key := types.NamespacedName{Namespace: veleroNamespace, Name: driver.ObjectName(ns+".again", "orphan-delete")}
	poll(t, "a DeleteBackupRequest for the leftover", func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, dbr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return dbr.Spec.BackupName == left.Name, nil
	})
	if j := getJob(t, c, ns, job.Name); j.Status.Phase.Terminal() {
		t.Fatalf("the job ended %s while the leftover was being deleted: %v", j.Status.Phase, j.Status.Conditions)
	}
	// Velero processes the request: the Backup and its data go.
	if err := c.Delete(ctx, left); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	dbr.Status.Phase = velerov1.DeleteBackupRequestPhaseProcessed
	if err := c.Update(ctx, dbr); err != nil {
		t.Fatal(err)
	}

	own := veleroBackupOf(t, c, job.UID)
	if own.Name != left.Name {
		t.Errorf("the job's Velero Backup is %s, want the derived name %s", own.Name, left.Name)
	}
	if err := setBackupStatus(ctx, c, client.ObjectKeyFromObject(own), completed(3)); err != nil {
		t.Fatal(err)
	}
	if done := waitJob(t, c, ns, job.Name); done.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("job ended %s: %v", done.Status.Phase, done.Status.Conditions)
	}
}
