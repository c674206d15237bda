package cnpgdriver_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/services/backup/cnpgdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
)

// completeSnapshot writes a volumeSnapshot CNPG Backup's status as CNPG
// does when the snapshots are taken (no CNPG runs here, nor a CSI driver):
// method, online as CNPG resolves it (the Backup's spec.online, else the
// Cluster's spec.backup.volumeSnapshot.online, else true), the snapshot of
// PG_DATA, WALs, LSNs and times, phase completed.
func completeSnapshot(ctx context.Context, c client.Client, bk *cnpgv1.Backup) error {
	cl := &cnpgv1.Cluster{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: bk.Namespace, Name: bk.Spec.Cluster.Name}, cl); err != nil {
		return err
	}
	online := true
	if s := cl.Spec.Backup; s != nil && s.VolumeSnapshot != nil && s.VolumeSnapshot.Online != nil {
		online = *s.VolumeSnapshot.Online
	}
	if bk.Spec.Online != nil {
		online = *bk.Spec.Online
	}
	now := metav1.Now()
	bk.Status.Method = cnpgv1.BackupMethodVolumeSnapshot
	bk.Status.Online = ptr.To(online)
	bk.Status.BackupSnapshotStatus.Elements = []cnpgv1.BackupSnapshotElementStatus{{Name: bk.Name, Type: "PG_DATA"}}
	bk.Status.BeginWal, bk.Status.EndWal = "000000010000000000000004", "000000010000000000000004"
	bk.Status.BeginLSN, bk.Status.EndLSN = "0/4000028", "0/4000028"
	bk.Status.StartedAt, bk.Status.StoppedAt = &now, &now
	bk.Status.Phase = cnpgv1.BackupPhaseCompleted
	return c.Status().Update(ctx, bk)
}

// The method volumeSnapshot works on a Cluster the postgres chart renders
// (which has no spec.backup): before the CNPG Backup, the driver sets the
// Cluster's spec.backup.volumeSnapshot (className when the parameters give
// one, else empty) by server-side apply under its field manager, without
// removing the object store a barmanObjectStore class set (nor the other
// way round); the CNPG Backup has method volumeSnapshot and spec.online as
// given (unset when not). The upstream CRDs validate both objects. Once
// this test writes the CNPG Backup's completed status as CNPG would
// (completeSnapshot), the job succeeds with the snapshot's driver data and
// an overlay that restores from the CNPG Backup by name.
func TestVolumeSnapshot(t *testing.T) {
	c := need(t)
	playApplications(t, c)
	replica(t, "snapshots-0")
	ns := namespace(t, c, "snapshots")
	ctx := context.Background()
	manager := v1alpha1.DriverFieldManager(cnpgdriver.DefaultName)

	// run backs app up with the parameters p, checks the CNPG Backup
	// (method and spec.online) and the Cluster (check), then completes the
	// CNPG Backup with complete and waits for the job to succeed.
	run := func(t *testing.T, name string, p map[string]any, method cnpgv1.BackupMethod, online *bool,
		check func(*cnpgv1.Cluster), complete func(context.Context, client.Client, *cnpgv1.Backup) error) *v1alpha1.Backup {
		t.Helper()
		job := &v1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1alpha1.BackupJobSpec{ApplicationRef: app, BackupClassName: "cnpg"}}
		createBound(t, c, job, cnpgdriver.DefaultName, params(t, p), nil)
		var bk *cnpgv1.Backup
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			objs, err := cnpgBackups(ctx, c, job.UID)
			if err != nil || len(objs) == 0 {
				return false, nil
			}
			bk = objs[0].(*cnpgv1.Backup)
			return true, nil
		}); err != nil {
			_ = c.Get(ctx, client.ObjectKeyFromObject(job), job)
			t.Fatalf("the driver created no CNPG Backup for %s: %v (status %+v)", name, err, job.Status.JobStatus)
		}
		if bk.Spec.Method != method || !equalPtr(bk.Spec.Online, online) {
			t.Errorf("CNPG Backup %s: method %q online %s, want %q online %s", bk.Name, bk.Spec.Method, show(bk.Spec.Online), method, show(online))
		}
		cl := &cnpgv1.Cluster{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: bk.Spec.Cluster.Name}, cl); err != nil {
			t.Fatal(err)
		}
		check(cl)
		if err := complete(ctx, c, bk); err != nil {
			t.Fatal(err)
		}
		st := waitJob(t, c, job, nil)
		checkEnded(t, st, v1alpha1.PhaseSucceeded, v1alpha1.ReasonSucceeded)
		b := &v1alpha1.Backup{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Status.BackupName}, b); err != nil {
			t.Fatal(err)
		}
		var dd cnpgdriver.DriverData
		if err := json.Unmarshal(b.Spec.DriverData.Raw, &dd); err != nil {
			t.Fatal(err)
		}
		if dd.Method != string(method) || dd.BackupName != bk.Name || dd.ClusterName != cl.Name || dd.Namespace != ns {
			t.Errorf("driverData %+v, want method %s, CNPG Backup %s/%s of %s", dd, method, ns, bk.Name, cl.Name)
		}
		if method == cnpgv1.BackupMethodVolumeSnapshot {
			want := `{"bootstrap":{"recovery":{"backupName":"` + bk.Name + `"}}}`
			if b.Spec.RestoreOverlay == nil || string(b.Spec.RestoreOverlay.Raw) != want {
				t.Errorf("restoreOverlay %s, want %s", rawOf(b.Spec.RestoreOverlay), want)
			}
		}
		return b
	}
	snapshots := func(vs map[string]any) map[string]any {
		p := map[string]any{"method": "volumeSnapshot"}
		if vs != nil {
			p["volumeSnapshot"] = vs
		}
		return p
	}
	// owns reports whether the driver's apply owns the field path of
	// spec.backup on cl.
	owns := func(cl *cnpgv1.Cluster, path ...string) bool {
		for _, mf := range cl.ManagedFields {
			if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
				continue
			}
			var f map[string]any
			if err := json.Unmarshal(mf.FieldsV1.Raw, &f); err != nil {
				t.Fatal(err)
			}
			for _, k := range append([]string{"spec", "backup"}, path...) {
				if f, _ = f["f:"+k].(map[string]any); f == nil {
					return false
				}
			}
			return true
		}
		return false
	}

	t.Run("class-cold", func(t *testing.T) {
		run(t, "snap-class", snapshots(map[string]any{"className": "csi-snapclass", "online": false}),
			cnpgv1.BackupMethodVolumeSnapshot, ptr.To(false), func(cl *cnpgv1.Cluster) {
				if s := cl.Spec.Backup; s == nil || s.VolumeSnapshot == nil || s.VolumeSnapshot.ClassName != "csi-snapclass" {
					t.Errorf("Cluster %s spec.backup %+v, want volumeSnapshot.className csi-snapclass", cl.Name, cl.Spec.Backup)
				}
				if !owns(cl, "volumeSnapshot", "className") {
					t.Errorf("Cluster %s: %s does not own spec.backup.volumeSnapshot.className: %+v", cl.Name, manager, cl.ManagedFields)
				}
			}, completeSnapshot)
	})

	// Parameters without className: the driver's className goes, the
	// section stays (CNPG's defaults: the default VolumeSnapshotClass);
	// online unset on the CNPG Backup.
	t.Run("defaults", func(t *testing.T) {
		run(t, "snap-defaults", snapshots(nil), cnpgv1.BackupMethodVolumeSnapshot, nil, func(cl *cnpgv1.Cluster) {
			if s := cl.Spec.Backup; s == nil || s.VolumeSnapshot == nil || s.VolumeSnapshot.ClassName != "" {
				t.Errorf("Cluster %s spec.backup %+v, want volumeSnapshot without className", cl.Name, cl.Spec.Backup)
			}
			if !owns(cl, "volumeSnapshot") || owns(cl, "volumeSnapshot", "className") {
				t.Errorf("Cluster %s: %s should own spec.backup.volumeSnapshot, not its className: %+v", cl.Name, manager, cl.ManagedFields)
			}
		}, completeSnapshot)
	})

	// An object-store class on the same Cluster keeps the volumeSnapshot
	// section; a hot snapshot after it keeps the object store (the WAL
	// archiving online snapshots need).
	t.Run("beside-object-store", func(t *testing.T) {
		both := func(cl *cnpgv1.Cluster) {
			s := cl.Spec.Backup
			if s == nil || s.VolumeSnapshot == nil || s.BarmanObjectStore == nil || s.BarmanObjectStore.DestinationPath != cnpgdriver.TenantPath(destination, cl.Namespace) {
				t.Errorf("Cluster %s spec.backup %+v, want both volumeSnapshot and the object store %s", cl.Name, s, cnpgdriver.TenantPath(destination, cl.Namespace))
			}
			if !owns(cl, "volumeSnapshot") || !owns(cl, "barmanObjectStore", "destinationPath") {
				t.Errorf("Cluster %s: %s should own both sections: %+v", cl.Name, manager, cl.ManagedFields)
			}
		}
		run(t, "snap-first", snapshots(map[string]any{"online": false}), cnpgv1.BackupMethodVolumeSnapshot, ptr.To(false),
			func(*cnpgv1.Cluster) {}, completeSnapshot)
		p := objectStoreParams()
		p["method"] = "barmanObjectStore"
		run(t, "store-next", p, cnpgv1.BackupMethodBarmanObjectStore, nil, both,
			func(ctx context.Context, c client.Client, bk *cnpgv1.Backup) error { return completeBackup(ctx, c, bk) })
		run(t, "hot-last", snapshots(map[string]any{"online": true}), cnpgv1.BackupMethodVolumeSnapshot, ptr.To(true), both, completeSnapshot)
	})

	// Refused parameters end the job InvalidParameters naming the field.
	t.Run("object-store-refused", func(t *testing.T) {
		p := objectStoreParams()
		p["method"] = "volumeSnapshot"
		job := &v1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Name: "snap-with-store", Namespace: ns},
			Spec: v1alpha1.BackupJobSpec{ApplicationRef: app, BackupClassName: "cnpg"}}
		createBound(t, c, job, cnpgdriver.DefaultName, params(t, p), nil)
		st := waitJob(t, c, job, nil)
		checkEnded(t, st, v1alpha1.PhaseFailed, v1alpha1.ReasonInvalidParameters, "barmanObjectStore", "set method: barmanObjectStore")
	})
}

func equalPtr(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(b *bool) string {
	if b == nil {
		return "unset"
	}
	if *b {
		return "true"
	}
	return "false"
}

func rawOf(j *apiextensionsv1.JSON) string {
	if j == nil {
		return "null"
	}
	return string(j.Raw)
}
