package mariadbdriver_test

import (
	"context"
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/services/backup/mariadbdriver"
)

// The restore overlay, applied by the core to a MariaDB application's
// captured spec, makes charts/mariadb render a MariaDB that bootstraps
// from the backup (spec.bootstrapFrom.backupRef), valid under the
// upstream CRD (server-side dry-run, strict field validation); without it
// the MariaDB has no bootstrapFrom.
func TestRestoreOverlayRendersBootstrapFrom(t *testing.T) {
	captured := map[string]any{"replicas": 2, "version": "v11.4", "size": "5Gi", "users": map[string]any{"app": map[string]any{}}}
	// The overlay goes through JSON, as the Backup stores it.
	raw, err := json.Marshal(mariadbdriver.RestoreOverlay("nightly-1-backup"))
	if err != nil {
		t.Fatal(err)
	}
	var overlay map[string]any
	if err := json.Unmarshal(raw, &overlay); err != nil {
		t.Fatal(err)
	}
	restored, err := renderMariaDB("tenant-test", "db-restored", mergePatch(captured, overlay))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedStringMap(restored.Object, "spec", "bootstrapFrom", "backupRef"); got["name"] != "nightly-1-backup" || got["kind"] != "Backup" {
		t.Errorf("bootstrapFrom.backupRef %v, want Backup nightly-1-backup", got)
	}
	if restored.GetName() != "mariadb-db-restored" {
		t.Errorf("MariaDB %s, want mariadb-db-restored", restored.GetName())
	}
	plain, err := renderMariaDB("tenant-test", "db", captured)
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedMap(plain.Object, "spec", "bootstrapFrom"); found {
		t.Error("a MariaDB without the overlay bootstraps from something")
	}

	c := need(t)
	ns := testNamespace(t, c)
	for _, m := range []*unstructured.Unstructured{restored, plain} {
		m.SetNamespace(ns)
		if err := c.Create(context.Background(), m, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
			t.Errorf("MariaDB %s is not valid under the upstream CRD: %v", m.GetName(), err)
		}
	}
}
