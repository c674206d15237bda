package cnpgdriver_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"cozystack.io/catalogs/services/backup/cnpgdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
)

// TestTenantsNeverShareABarmanDirectory (k7-backup-driver.md, "Tenant
// isolation"): two tenants each back up their Postgres db with the same
// class (one shared object store). Each Cluster archives to its own
// namespace's path, "<destinationPath>/<namespace>", under its own name as
// barman's serverName, so the two never share a directory; each Backup's
// driverData and restore overlay name that Backup's own path, so a restore
// reads from the source's path only.
func TestTenantsNeverShareABarmanDirectory(t *testing.T) {
	c := need(t)
	playApplications(t, c)
	replica(t, "isolation-0")
	ctx := context.Background()
	type seen struct {
		store   *cnpgv1.BarmanObjectStoreConfiguration
		dd      cnpgdriver.DriverData
		overlay map[string]any
	}
	got := map[string]seen{}
	for _, ns := range []string{namespace(t, c, "tenant-iso-a"), namespace(t, c, "tenant-iso-b")} {
		job := &v1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
			Spec: v1alpha1.BackupJobSpec{ApplicationRef: app, BackupClassName: "cnpg"}}
		createBound(t, c, job, cnpgdriver.DefaultName, params(t, objectStoreParams()), nil)
		var bk *cnpgv1.Backup
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			objs, err := cnpgBackups(ctx, c, job.UID)
			if err != nil || len(objs) == 0 {
				return false, nil
			}
			bk = objs[0].(*cnpgv1.Backup)
			return true, nil
		}); err != nil {
			t.Fatalf("%s: the driver created no CNPG Backup", ns)
		}
		if err := completeBackup(ctx, c, bk); err != nil {
			t.Fatal(err)
		}
		checkEnded(t, waitJob(t, c, job, nil), v1alpha1.PhaseSucceeded, v1alpha1.ReasonSucceeded)
		cl := &cnpgv1.Cluster{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: bk.Spec.Cluster.Name}, cl); err != nil {
			t.Fatal(err)
		}
		if cl.Spec.Backup == nil || cl.Spec.Backup.BarmanObjectStore == nil {
			t.Fatalf("%s: Cluster %s has no object store", ns, cl.Name)
		}
		b := &v1alpha1.Backup{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Status.BackupName}, b); err != nil {
			t.Fatal(err)
		}
		s := seen{store: cl.Spec.Backup.BarmanObjectStore}
		if err := json.Unmarshal(b.Spec.DriverData.Raw, &s.dd); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b.Spec.RestoreOverlay.Raw, &s.overlay); err != nil {
			t.Fatal(err)
		}
		got[ns] = s
	}
	a, b := got["tenant-iso-a"], got["tenant-iso-b"]
	if a.store.DestinationPath == b.store.DestinationPath && a.store.ServerName == b.store.ServerName {
		t.Fatalf("both tenants' db archive to %s, server %q: one barman directory for two tenants", a.store.DestinationPath, a.store.ServerName)
	}
	for ns, s := range got {
		want := destination + "/" + ns
		if s.store.DestinationPath != want || s.store.ServerName != cnpgdriver.ClusterName(app.Name) {
			t.Errorf("%s: the Cluster archives to %s server %q, want %s server %q", ns, s.store.DestinationPath, s.store.ServerName, want, cnpgdriver.ClusterName(app.Name))
		}
		if s.dd.DestinationPath != want {
			t.Errorf("%s: the Backup's driverData says %s, want %s", ns, s.dd.DestinationPath, want)
		}
		rec, _ := s.overlay["bootstrap"].(map[string]any)["recovery"].(map[string]any)
		if rec["destinationPath"] != want || rec["serverName"] != cnpgdriver.ClusterName(app.Name) {
			t.Errorf("%s: the restore overlay reads %v, want %s server %s", ns, rec, want, cnpgdriver.ClusterName(app.Name))
		}
	}
}
