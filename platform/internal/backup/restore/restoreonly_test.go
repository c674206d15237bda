package restore_test

import (
	"strings"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/backup/backuptest"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// The kind of these tests: a Postgres-like spec whose bootstrap.recovery
// says where the backup to recover from is, marked restore-only
// (x-cozystack-restore-only; contract K1, "Restore-only fields").
const (
	guardedKind   = "RestoreGuarded"
	guardedPlural = "restoreguardeds"
)

var (
	guardedGVR  = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: guardedPlural}
	guardedOnce sync.Once
)

// startGuarded serves RestoreGuarded, lets every tenant's admins keep
// them, and waits until alice's admins may create one.
func startGuarded(t *testing.T) {
	t.Helper()
	start(t)
	guardedOnce.Do(func() {
		ctx := testContext(t)
		ad := minimalAD("restoreguarded", guardedKind, guardedPlural, "restoreguarded-")
		ad.Spec.Application.OpenAPISchema = `{"type":"object","properties":{` +
			`"size":{"type":"string","default":"1Gi"},` +
			`"bootstrap":{"type":"object","default":{},"properties":{"recovery":{"type":"object","default":{},"x-cozystack-restore-only":true,"properties":{` +
			`"destinationPath":{"type":"string"},"serverName":{"type":"string"},"backupID":{"type":"string"}}}}}}}`
		role := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "test:restoreguarded:admin", Labels: map[string]string{v1alpha1.TenantRoleAggregationLabel(v1alpha1.TenantLevelAdmin): "true"}},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps.cozystack.io"}, Resources: []string{guardedPlural},
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
		}
		if err := c.Create(ctx, ad); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		if err := c.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		backuptest.Eventually(t, patience, "RestoreGuarded served and creatable by alice's admins", func() error {
			if _, err := apps.Resource(guardedGVR).Namespace(alice).List(ctx, metav1.ListOptions{}); err != nil {
				return err
			}
			_, err := appsAs(t, "alice", v1alpha1.TenantGroup(alice, v1alpha1.TenantLevelAdmin)).Resource(guardedGVR).Namespace(alice).
				List(ctx, metav1.ListOptions{})
			return err
		})
	})
}

func guarded(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.cozystack.io/v1alpha1", "kind": guardedKind,
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

// bobsBackup is the recovery source of the attack: where the shared store
// keeps bob's db.
func bobsBackup() map[string]any {
	return map[string]any{"destinationPath": "s3://demo-backups/postgres/" + bob, "serverName": "postgres-db", "backupID": "20261202T073000"}
}

// checkRefused fails unless err is the restore-only refusal naming
// spec.bootstrap.recovery, the rule and the way out.
func checkRefused(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		t.Fatalf("%s: %v, want 422 Invalid (restore-only field)", what, err)
	}
	for _, want := range []string{"spec.bootstrap.recovery", "x-cozystack-restore-only", "k1-application.md", "Restore-only fields", "RestoreJob"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not name %q", what, err.Error(), want)
		}
	}
}

// TestTenantCannotSetRecoveryFields (contract K1, "Restore-only fields"):
// alice's admin writes bootstrap.recovery pointing at bob's backup path
// into a spec: refused, naming the field, on create, on update and on a
// patch of an application without it, so no Cluster of alice recovers
// bob's data without a BackupGrant. Fields that are not restore-only
// still change.
func TestTenantCannotSetRecoveryFields(t *testing.T) {
	startGuarded(t)
	ctx := testContext(t)
	res := appsAs(t, "alice", v1alpha1.TenantGroup(alice, v1alpha1.TenantLevelAdmin)).Resource(guardedGVR).Namespace(alice)

	_, err := res.Create(ctx, guarded("steal", map[string]any{"bootstrap": map[string]any{"recovery": bobsBackup()}}), metav1.CreateOptions{})
	checkRefused(t, "create with bootstrap.recovery", err)
	if _, err := apps.Resource(guardedGVR).Namespace(alice).Get(ctx, "steal", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused application exists: %v", err)
	}

	cur, err := res.Create(ctx, guarded("plain", map[string]any{"size": "2Gi"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create without restore-only fields: %v", err)
	}
	upd := cur.DeepCopy()
	_ = unstructured.SetNestedMap(upd.Object, bobsBackup(), "spec", "bootstrap", "recovery")
	_, err = res.Update(ctx, upd, metav1.UpdateOptions{})
	checkRefused(t, "update adding bootstrap.recovery", err)
	_, err = res.Patch(ctx, "plain", types.MergePatchType, []byte(`{"spec":{"bootstrap":{"recovery":{"serverName":"postgres-db","destinationPath":"s3://demo-backups/postgres/`+bob+`"}}}}`), metav1.PatchOptions{})
	checkRefused(t, "merge patch adding bootstrap.recovery", err)
	if _, err := res.Patch(ctx, "plain", types.MergePatchType, []byte(`{"spec":{"size":"3Gi"}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("patch of a field that is not restore-only: %v", err)
	}
}

// TestRestoreSetsRecoveryFields: the core's restore still creates the new
// application with the restore-only fields a Backup's restoreOverlay sets
// (the core writes through the application API as its own identity,
// cozystack-api's --restore-identity), and the tenant then changes the
// restored application's other fields while the recovery fields stay, but
// may not point them elsewhere.
func TestRestoreSetsRecoveryFields(t *testing.T) {
	startGuarded(t)
	registerDriver(t, "demo", true, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	ctx := testContext(t)
	b := backupOf(t, alice, "guarded-snap", "guarded-src", "demo", map[string]any{"size": "2Gi"})
	b.Spec.ApplicationRef.Kind = guardedKind
	own := map[string]any{"destinationPath": "s3://demo-backups/postgres/" + alice, "serverName": "restoreguarded-guarded-src", "backupID": "20261202T080000"}
	b.Spec.RestoreOverlay = &backupsv1alpha1.RawSpec{Raw: []byte(`{"bootstrap":{"recovery":{"destinationPath":"` + own["destinationPath"].(string) +
		`","serverName":"` + own["serverName"].(string) + `","backupID":"` + own["backupID"].(string) + `"}}}`)}
	createBackup(t, b)
	admin := as(t, "alice", v1alpha1.TenantGroup(alice, v1alpha1.TenantLevelAdmin))
	waitTenantRoles(t, admin, alice)
	job := newRestore(t, admin, alice, "guarded-restore", "", "guarded-snap", "guarded-copy")
	waitCondition(t, job, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)

	res := appsAs(t, "alice", v1alpha1.TenantGroup(alice, v1alpha1.TenantLevelAdmin)).Resource(guardedGVR).Namespace(alice)
	app, err := res.Get(ctx, "guarded-copy", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the restored application: %v", err)
	}
	if rec, _, _ := unstructured.NestedMap(app.Object, "spec", "bootstrap", "recovery"); rec["destinationPath"] != own["destinationPath"] || rec["serverName"] != own["serverName"] {
		t.Fatalf("restored spec.bootstrap.recovery = %v, want the overlay's %v", rec, own)
	}
	_ = unstructured.SetNestedField(app.Object, "5Gi", "spec", "size")
	app, err = res.Update(ctx, app, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update of the restored application's size, recovery unchanged: %v", err)
	}
	_ = unstructured.SetNestedMap(app.Object, bobsBackup(), "spec", "bootstrap", "recovery")
	_, err = res.Update(ctx, app, metav1.UpdateOptions{})
	checkRefused(t, "update pointing the restored application's recovery at bob's path", err)
}
