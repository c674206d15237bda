package restore_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/platform/internal/backup/backuptest"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// TestFailedRestoreRemovesItsApplication: alice restores a Backup into a
// new application, whose restore the driver then fails (its restore
// template did not execute: TemplateError). The core had created the
// application and recorded its UID in status.targetUID; on the failure it
// deletes that application, so nothing stays behind Ready and empty, and
// a second RestoreJob into the same name binds (no TargetExists). An
// application that existed before a job, of the same name, is never
// deleted by its failure (TargetExists keeps it, and records no UID).
func TestFailedRestoreRemovesItsApplication(t *testing.T) {
	start(t)
	ctx := testContext(t)
	registerDriver(t, "demo", true, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	takeBackup(t, alice, "db-fails", "db", "demo", map[string]any{"size": "1Gi"})
	alicec := as(t, "alice", "tenant-alice-admin")
	waitTenantRoles(t, alicec, alice)

	first := newRestore(t, alicec, alice, "fails-once", "", "db-fails", "scratch")
	bound := waitCondition(t, first, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
	app := getApp(t, alice, "scratch")
	if app == nil {
		t.Fatal("the core did not create the application scratch")
	}
	if bound.Status.TargetUID != app.GetUID() {
		t.Errorf("status.targetUID %q, want the created application's UID %s", bound.Status.TargetUID, app.GetUID())
	}

	// The driver fails the run, as the SDK writes it for a TemplateError.
	fail := map[string]any{"phase": string(backupsv1alpha1.PhaseFailed), "completionTime": metav1.Now(),
		"conditions": []metav1.Condition{{Type: backupsv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
			Reason: backupsv1alpha1.ReasonTemplateError, Message: "template in parameters field restore: missing key", LastTransitionTime: metav1.Now()}}}
	if err := apply.Status(ctx, c, first, fail, backupsv1alpha1.DriverFieldManager("demo")); err != nil {
		t.Fatal(err)
	}
	backuptest.Eventually(t, patience, "the application of the failed restore deleted", func() error {
		if a := getApp(t, alice, "scratch"); a != nil {
			return fmt.Errorf("scratch (UID %s) still exists", a.GetUID())
		}
		return nil
	})

	// A retry into the same name is not refused.
	retry := newRestore(t, alicec, alice, "fails-once-retry", "", "db-fails", "scratch")
	got := waitCondition(t, retry, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
	again := getApp(t, alice, "scratch")
	if again == nil || again.GetUID() != got.Status.TargetUID || again.GetLabels()["cozystack-backup-core/restore-job"] != string(got.UID) {
		t.Fatalf("the retry's application %v, want one created for RestoreJob %s (targetUID %s)", again, got.Name, got.Status.TargetUID)
	}

	// An application that was there first is never the core's to delete.
	createApp(t, alice, "kept", nil, map[string]any{"size": "1Gi"})
	refused := newRestore(t, alicec, alice, "into-existing", "", "db-fails", "kept")
	done := waitCondition(t, refused, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonTargetExists)
	if done.Status.TargetUID != "" {
		t.Errorf("a job refused TargetExists recorded targetUID %s", done.Status.TargetUID)
	}
	consistently(t, "the existing application kept", 2*time.Second, func() error {
		if getApp(t, alice, "kept") == nil {
			return fmt.Errorf("kept was deleted")
		}
		return nil
	})
}
