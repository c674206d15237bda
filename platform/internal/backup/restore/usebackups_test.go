package restore_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/backup/backuptest"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// TestUseCannotCauseABackupsDeletion: a `use` member of a tenant (the
// platform's tenant roles, platform/tenantaccess/roles.yaml) may start a
// backup by hand and nothing else on backups.cozystack.io: it cannot
// delete a Backup (one by one or as a collection), nor create or edit one,
// nor edit or delete a BackupJob (its labels, finalizers or
// ownerReferences), nor write any status (the Plan's UID a job records),
// nor touch a Plan (its retention). The BackupJob it may create, labelled
// with a Plan and claiming the Plan as its controller, is not the Plan's
// (TestRetentionCountsOnlyThePlansJobs in package plan). Deleting a Backup
// stays with `admin` (contract k7, "Retention").
func TestUseCannotCauseABackupsDeletion(t *testing.T) {
	start(t)
	ctx := testContext(t)
	b := takeBackup(t, alice, "kept-from-use", "db", "demo", map[string]any{"size": "1Gi"})
	use := as(t, "ursula", v1alpha1.TenantGroup(alice, v1alpha1.TenantLevelUse))
	admin := as(t, "alice", v1alpha1.TenantGroup(alice, v1alpha1.TenantLevelAdmin))
	backuptest.Eventually(t, patience, "the use role bound in "+alice, func() error {
		return use.List(context.Background(), &backupsv1alpha1.BackupList{}, client.InNamespace(alice))
	})

	forbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("use member: %s: got %v, want Forbidden", what, err)
		}
	}
	forbidden("delete a Backup", use.Delete(ctx, b.DeepCopy()))
	forbidden("delete all Backups", use.DeleteAllOf(ctx, &backupsv1alpha1.Backup{}, client.InNamespace(alice)))
	mine := backupOf(t, alice, "by-use", "db", "demo", nil)
	forbidden("create a Backup", use.Create(ctx, mine))
	edit := b.DeepCopy()
	edit.Labels = map[string]string{backupsv1alpha1.LabelPlanUID: "x"}
	forbidden("label a Backup", use.Update(ctx, edit))

	plan := &backupsv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Namespace: alice, Name: "use-plan"}, Spec: backupsv1alpha1.PlanSpec{
		ApplicationRef: b.Spec.ApplicationRef, BackupClassName: "any", Schedule: backupsv1alpha1.Schedule{Cron: "0 3 * * *"},
		Retention: &backupsv1alpha1.Retention{KeepLast: ptr.To[int32](1)}}}
	forbidden("create a Plan", use.Create(ctx, plan.DeepCopy()))
	if err := admin.Create(ctx, plan); err != nil {
		t.Fatalf("admin: create a Plan: %v", err)
	}
	forbidden("edit a Plan's retention", use.Patch(ctx, plan.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"retention":{"keepLast":0}}}`))))
	forbidden("delete a Plan", use.Delete(ctx, plan.DeepCopy()))

	// A hand-made job naming the Plan in its label and as its controller:
	// allowed to exist, but it is all the member may do to it.
	job := &backupsv1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: alice, Name: "by-use", Labels: map[string]string{backupsv1alpha1.LabelPlan: plan.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: backupsv1alpha1.GroupVersion.String(), Kind: "Plan", Name: plan.Name, UID: plan.UID, Controller: ptr.To(true)}}},
		Spec: backupsv1alpha1.BackupJobSpec{ApplicationRef: b.Spec.ApplicationRef, BackupClassName: "any"},
	}
	if err := use.Create(ctx, job); err != nil {
		t.Fatalf("use member: create a BackupJob: %v", err)
	}
	forbidden("relabel a BackupJob", use.Patch(ctx, job.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"backups.cozystack.io/plan":"other"}}}`))))
	forbidden("drop a BackupJob's finalizers", use.Patch(ctx, job.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))
	forbidden("record a Plan's UID in a BackupJob's status", use.Status().Patch(ctx, job.DeepCopy(),
		client.RawPatch(types.MergePatchType, []byte(`{"status":{"planUID":"`+string(plan.UID)+`"}}`))))
	forbidden("delete a BackupJob", use.Delete(ctx, job.DeepCopy()))

	// admin, for contrast, deletes Backups.
	if err := admin.Delete(ctx, b); err != nil {
		t.Errorf("admin: delete a Backup: %v", err)
	}
}
