package quota_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/quota"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(backuptest.Main(m, &env)) }

func job(ns, name string) *backupsv1alpha1.BackupJob {
	return &backupsv1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: backupsv1alpha1.BackupJobSpec{
		ApplicationRef: backupsv1alpha1.ApplicationRef{
			ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: backuptest.AppGroup, Kind: "VMInstance"}, Name: "vm"},
		BackupClassName: "vm"}}
}

// TestBackupObjectsQuota: every tenant namespace gets
// the ResourceQuota cozy-backup-objects with the configured counts, and
// kube-apiserver refuses the BackupJob beyond the limit, naming the quota
// and the resource; a namespace that is not a tenant's gets none.
func TestBackupObjectsQuota(t *testing.T) {
	c := backuptest.Client(t, env, "")
	backuptest.StartManager(t, env.Config, func(mgr ctrl.Manager) error {
		return quota.Setup(mgr, quota.Options{Plans: 2, BackupJobs: 3, Backups: 4, RestoreJobs: 5})
	})
	ctx := backuptest.Context(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-quota-", Labels: map[string]string{v1alpha1.LabelTenant: "quota"}}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, ns) })
	other := backuptest.TempNamespace(t, c, "not-a-tenant-")

	q := &corev1.ResourceQuota{}
	backuptest.Eventually(t, 60*time.Second, "ResourceQuota cozy-backup-objects with its usage computed", func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: quota.Name}, q); err != nil {
			return err
		}
		if len(q.Status.Hard) == 0 {
			return fmt.Errorf("no status yet")
		}
		return nil
	})
	want := map[string]string{
		"count/plans.backups.cozystack.io": "2", "count/backupjobs.backups.cozystack.io": "3",
		"count/backups.backups.cozystack.io": "4", "count/restorejobs.backups.cozystack.io": "5",
	}
	if len(q.Spec.Hard) != len(want) {
		t.Errorf("spec.hard %v, want %v", q.Spec.Hard, want)
	}
	for k, v := range want {
		if got := q.Spec.Hard[corev1.ResourceName(k)]; got.String() != v {
			t.Errorf("spec.hard[%s] = %s, want %s", k, got.String(), v)
		}
	}
	if q.Labels[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByController {
		t.Errorf("labels %v", q.Labels)
	}

	// Until kube-apiserver's quota admission has seen the usage computed
	// by kube-controller-manager it refuses every counted create ("status
	// unknown for quota"); the resourcequota controller finds the
	// resources of new CRDs by discovery every 30 s, and counts them at
	// its next sync of the quota (every 15 s in sdk/localcp).
	backuptest.Eventually(t, 90*time.Second, "the first BackupJob admitted", func() error {
		err := c.Create(ctx, job(ns.Name, "j0"))
		return err
	})
	for i := 1; i < 3; i++ {
		if err := c.Create(ctx, job(ns.Name, fmt.Sprintf("j%d", i))); err != nil {
			t.Fatalf("BackupJob %d of 3: %v", i+1, err)
		}
	}
	err := c.Create(ctx, job(ns.Name, "j3"))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: "+quota.Name) || !strings.Contains(err.Error(), "count/backupjobs.backups.cozystack.io") {
		t.Fatalf("the 4th BackupJob: %v, want 403 Forbidden exceeded quota %s naming count/backupjobs.backups.cozystack.io", err, quota.Name)
	}
	t.Logf("refused: %v", err)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: quota.Name}, q); err == nil {
		t.Logf("quota status: %v", q.Status)
	}

	time.Sleep(time.Second)
	var list corev1.ResourceQuotaList
	if err := c.List(ctx, &list, client.InNamespace(other)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("namespace %s (not a tenant's) has quotas %v", other, list.Items)
	}
}
