package cnpgdriver_test

import (
	"context"
	"testing"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/services/backup/cnpgdriver"
)

// The restore overlay the driver writes with a Backup, applied to a
// tenant's spec as the core applies it, renders with the postgres chart (and
// its values schema) into a Cluster that bootstraps with
// bootstrap.recovery, and that Cluster passes the upstream CRD's
// validation (a strict server-side dry-run).
func TestRestoreOverlayRendersCluster(t *testing.T) {
	c := need(t)
	ns := namespace(t, c, "overlay")
	base := cnpgdriver.DriverData{BackupName: "nightly-1-cnpg", Namespace: "tenant-a", ClusterName: "postgres-db",
		Method: string(cnpgv1.BackupMethodBarmanObjectStore), ServerName: "postgres-db", DestinationPath: cnpgdriver.TenantPath(destination, "tenant-a"),
		EndpointURL: endpoint, BackupID: "20261202T073000"}
	snapshots := base
	snapshots.Method = string(cnpgv1.BackupMethodVolumeSnapshot)
	for _, tc := range []struct {
		name    string
		overlay map[string]any
		check   func(*cnpgv1.Cluster) string
	}{
		{"object-store", cnpgdriver.RestoreOverlay(base), func(cl *cnpgv1.Cluster) string {
			if err := checkRecovery(cl, cl.Name, base.DestinationPath); err != nil {
				return err.Error()
			}
			return ""
		}},
		{"point-in-time", withTargetTime(cnpgdriver.RestoreOverlay(base), "2026-12-02T07:00:00Z"), func(cl *cnpgv1.Cluster) string {
			if r := cl.Spec.Bootstrap.Recovery.RecoveryTarget; r == nil || r.TargetTime != "2026-12-02T07:00:00Z" {
				return "recoveryTarget.targetTime not rendered"
			}
			return ""
		}},
		{"volume-snapshot", cnpgdriver.RestoreOverlay(snapshots), func(cl *cnpgv1.Cluster) string {
			if r := cl.Spec.Bootstrap.Recovery; r.Backup == nil || r.Backup.Name != "nightly-1-cnpg" || len(cl.Spec.ExternalClusters) != 0 {
				return "want recovery.backup.name nightly-1-cnpg and no externalClusters"
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := withOverlay(postgresSpec(), &apiextensionsv1.JSON{Raw: mustJSON(t, tc.overlay)})
			if err != nil {
				t.Fatal(err)
			}
			release := cnpgdriver.ClusterName("db-restored-" + tc.name)
			cl, err := renderCluster(release, spec)
			if err != nil {
				t.Fatalf("render the postgres chart with the overlay: %v", err)
			}
			if cl.Spec.Bootstrap == nil || cl.Spec.Bootstrap.Recovery == nil {
				t.Fatalf("the rendered Cluster has no bootstrap.recovery: %+v", cl.Spec.Bootstrap)
			}
			if msg := tc.check(cl); msg != "" {
				t.Fatal(msg)
			}
			cl.Namespace = ns
			if err := c.Create(context.Background(), cl, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
				t.Fatalf("the upstream Cluster CRD refuses the rendered Cluster: %v", err)
			}
		})
	}
	// Without an overlay the chart renders no bootstrap (initdb, as before).
	cl, err := renderCluster("postgres-fresh", postgresSpec())
	if err != nil {
		t.Fatal(err)
	}
	if cl.Spec.Bootstrap != nil || len(cl.Spec.ExternalClusters) != 0 {
		t.Errorf("a Postgres without bootstrap values renders bootstrap %+v", cl.Spec.Bootstrap)
	}
}

func withTargetTime(overlay map[string]any, at string) map[string]any {
	overlay["bootstrap"].(map[string]any)["recovery"].(map[string]any)["targetTime"] = at
	return overlay
}
