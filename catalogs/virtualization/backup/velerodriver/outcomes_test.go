package velerodriver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/virtualization/backup/velerodriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
)

// Velero's terminal and waiting phases end the job as phases.go says;
// Velero's status is written by the test as Velero would (no Velero runs).
func TestVeleroOutcomes(t *testing.T) {
	c := need(t)
	ns := namespace(t, c)
	startDriver(t, options("outcomes-0", 6*time.Second))
	base := map[string]any{"storageLocation": "default"}
	now := metav1.Now()
	for _, tt := range []struct {
		name   string
		params map[string]any
		status *velerov1.BackupStatus
		phase  v1alpha1.JobPhase
		reason string
		says   []string
	}{
		{name: "completed", params: base, status: &velerov1.BackupStatus{Phase: velerov1.BackupPhaseCompleted,
			Progress: &velerov1.BackupProgress{TotalItems: 9, ItemsBackedUp: 9}, CompletionTimestamp: &now},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonSucceeded},
		{name: "partially-failed", params: base, status: &velerov1.BackupStatus{Phase: velerov1.BackupPhasePartiallyFailed,
			Progress: &velerov1.BackupProgress{TotalItems: 12, ItemsBackedUp: 10}, Errors: 2, Warnings: 1},
			phase: v1alpha1.PhaseSucceeded, reason: v1alpha1.ReasonSucceeded, says: []string{"10 of 12 items backed up, 2 errors, 1 warnings"}},
		{name: "failed-validation", params: base, status: &velerov1.BackupStatus{Phase: velerov1.BackupPhaseFailedValidation,
			ValidationErrors: []string{"a BackupStorageLocation CRD with the name specified in the backup spec needs to be created before this backup can be executed. Error: backupstoragelocations.velero.io \"default\" not found"}},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonInvalidParameters, says: []string{"FailedValidation", `"default" not found`}},
		{name: "failed", params: base, status: &velerov1.BackupStatus{Phase: velerov1.BackupPhaseFailed, FailureReason: "error getting backup storage location"},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonBackendFailed, says: []string{"error getting backup storage location"}},
		{name: "deleting", params: base, status: &velerov1.BackupStatus{Phase: velerov1.BackupPhaseDeleting},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonBackendFailed, says: []string{"Deleting"}},
		{name: "never-started", params: map[string]any{"storageLocation": "default", "startTimeout": "2s"},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonBackendFailed, says: []string{"startTimeout", "is Velero running in namespace velero"}},
		{name: "queued-too-long", params: map[string]any{"storageLocation": "default", "startTimeout": "2s"}, status: &velerov1.BackupStatus{Phase: velerov1.BackupPhaseQueued},
			phase: v1alpha1.PhaseFailed, reason: v1alpha1.ReasonBackendFailed, says: []string{"Queued", "startTimeout"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			job := backupJob(t, c, ns, tt.name, "", params(t, tt.params))
			vb := veleroBackupOf(t, c, job.UID)
			if tt.status != nil {
				if err := setBackupStatus(context.Background(), c, client.ObjectKeyFromObject(vb), *tt.status); err != nil {
					t.Fatal(err)
				}
			}
			done := waitJob(t, c, ns, job.Name)
			ready := apimeta.FindStatusCondition(done.Status.Conditions, v1alpha1.ConditionReady)
			if done.Status.Phase != tt.phase || ready == nil || ready.Reason != tt.reason {
				t.Fatalf("phase %s, Ready %+v; want %s %s", done.Status.Phase, ready, tt.phase, tt.reason)
			}
			msg := ready.Message
			if done.Status.Progress != nil {
				msg += " | " + done.Status.Progress.Message
			}
			for _, s := range tt.says {
				if !strings.Contains(msg, s) {
					t.Errorf("messages %q do not say %q", msg, s)
				}
			}
			if tt.phase != v1alpha1.PhaseSucceeded {
				return
			}
			b := &v1alpha1.Backup{}
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: done.Status.BackupName}, b); err != nil {
				t.Fatal(err)
			}
			if tt.name != "partially-failed" {
				return
			}
			poll(t, "Degraded=True on Backup "+b.Name, func(ctx context.Context) (bool, error) {
				if err := c.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
					return false, err
				}
				d := apimeta.FindStatusCondition(b.Status.Conditions, velerodriver.ConditionDegraded)
				return d != nil && d.Status == metav1.ConditionTrue && strings.Contains(d.Message, "10 of 12 items backed up, 2 errors"), nil
			})
			if !apimeta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionReady) {
				t.Errorf("the Verifier's write dropped Ready: %+v", b.Status.Conditions)
			}
		})
	}
}

// The Velero Backup selects the VMInstance's release and its disks' by
// label, in the application's namespace, at the storage location of the
// parameters.
func TestSelection(t *testing.T) {
	c := need(t)
	ns := namespace(t, c)
	startDriver(t, options("selection-0", 6*time.Second))
	job := backupJob(t, c, ns, "select", "", params(t, map[string]any{"storageLocation": "s3-main", "volumeSnapshotLocations": []string{"linstor"}}))
	vb := veleroBackupOf(t, c, job.UID)
	var got []string
	for _, s := range vb.Spec.OrLabelSelectors {
		got = append(got, s.MatchLabels[velerodriver.LabelInstance])
	}
	if strings.Join(got, ",") != "vm-instance-web,vm-disk-system,vm-disk-data" || vb.Spec.LabelSelector != nil {
		t.Errorf("selectors %v, want vm-instance-web, vm-disk-system, vm-disk-data", got)
	}
	if len(vb.Spec.IncludedNamespaces) != 1 || vb.Spec.IncludedNamespaces[0] != ns || vb.Spec.StorageLocation != "s3-main" ||
		len(vb.Spec.VolumeSnapshotLocations) != 1 {
		t.Errorf("spec %+v", vb.Spec)
	}
}

// Velero's TTL follows the Plan's retention when it bounds the Backups'
// age, and says so (or the mismatch) otherwise.
func TestTTLFromRetention(t *testing.T) {
	c := need(t)
	ns := namespace(t, c)
	startDriver(t, options("ttl-0", 6*time.Second))
	plan := func(name string, r *v1alpha1.Retention) {
		p := &v1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.PlanSpec{
			ApplicationRef: vm, BackupClassName: "vms", Schedule: v1alpha1.Schedule{Cron: "0 3 * * *"}, Retention: r}}
		if err := c.Create(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	plan("max-age", &v1alpha1.Retention{MaxAge: &metav1.Duration{Duration: 48 * time.Hour}, MinKeep: ptr.To[int32](0)})
	plan("daily", &v1alpha1.Retention{KeepDaily: ptr.To[int32](7)})
	for _, tt := range []struct {
		name, plan string
		params     map[string]any
		ttl        time.Duration
		says       []string
	}{
		{"bounded", "max-age", map[string]any{"storageLocation": "default"}, 49 * time.Hour, []string{"Plan max-age's retention maxAge 48h0m0s"}},
		{"bounded-overrides-param", "max-age", map[string]any{"storageLocation": "default", "ttl": "720h"}, 49 * time.Hour,
			[]string{"TTL mismatch: parameters ttl 720h0m0s ignored"}},
		{"unbounded", "daily", map[string]any{"storageLocation": "default"}, velerodriver.MaxTTL, []string{"keeps Backups of any age (keepDaily 7, minKeep 1)"}},
		{"unbounded-param-mismatch", "daily", map[string]any{"storageLocation": "default", "ttl": "720h"}, 720 * time.Hour,
			[]string{"TTL mismatch", "Velero deletes this backup after 720h0m0s", "ArtifactMissing"}},
		{"no-plan", "", map[string]any{"storageLocation": "default"}, velerodriver.MaxTTL, []string{"comes from no Plan"}},
		{"plan-missing", "gone", map[string]any{"storageLocation": "default"}, velerodriver.MaxTTL, []string{"Plan gone does not exist"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			job := backupJob(t, c, ns, tt.name, tt.plan, params(t, tt.params))
			vb := veleroBackupOf(t, c, job.UID)
			if vb.Spec.TTL.Duration != tt.ttl {
				t.Errorf("spec.ttl %s, want %s", vb.Spec.TTL.Duration, tt.ttl)
			}
			var msg string
			poll(t, "the TTL in the job's progress", func(ctx context.Context) (bool, error) {
				j := getJob(t, c, ns, job.Name)
				if j.Status.Progress == nil {
					return false, nil
				}
				msg = j.Status.Progress.Message
				return strings.Contains(msg, "TTL"), nil
			})
			for _, s := range tt.says {
				if !strings.Contains(msg, s) || !strings.Contains(vb.Annotations[velerodriver.AnnotationTTL], s) {
					t.Errorf("progress %q / annotation %q do not say %q", msg, vb.Annotations[velerodriver.AnnotationTTL], s)
				}
			}
		})
	}
}

// A Backup whose Velero backup vanished gets ArtifactMissing=True
// (capability Verify); it was False while the Velero backup existed.
func TestArtifactMissing(t *testing.T) {
	c := need(t)
	ns := namespace(t, c)
	startDriver(t, options("verify-0", 6*time.Second))
	job := backupJob(t, c, ns, "to-lose", "", params(t, map[string]any{"storageLocation": "default"}))
	vb := veleroBackupOf(t, c, job.UID)
	if err := setBackupStatus(context.Background(), c, client.ObjectKeyFromObject(vb), completed(5)); err != nil {
		t.Fatal(err)
	}
	done := waitJob(t, c, ns, job.Name)
	if done.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("job %s", done.Status.Phase)
	}
	b := &v1alpha1.Backup{}
	key := types.NamespacedName{Namespace: ns, Name: done.Status.BackupName}
	cond := func(status metav1.ConditionStatus, reason string) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, key, b); err != nil {
				return false, err
			}
			m := apimeta.FindStatusCondition(b.Status.Conditions, velerodriver.ConditionArtifactMissing)
			return m != nil && m.Status == status && m.Reason == reason, nil
		}
	}
	poll(t, "ArtifactMissing=False", cond(metav1.ConditionFalse, velerodriver.ReasonVeleroBackupPresent))
	// Someone (or Velero's TTL) deletes the Velero backup.
	if err := c.Delete(context.Background(), vb); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	poll(t, "ArtifactMissing=True", cond(metav1.ConditionTrue, velerodriver.ReasonVeleroBackupNotFound))
	if !apimeta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionReady) {
		t.Errorf("Ready was dropped: %+v", b.Status.Conditions)
	}
	t.Logf("%s", apimeta.FindStatusCondition(b.Status.Conditions, velerodriver.ConditionArtifactMissing).Message)
}
