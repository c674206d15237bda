package cnpgdriver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/services/backup/cnpgdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/conformance"
)

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// replica runs one in-process driver replica for the test.
func replica(t *testing.T, identity string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- start(ctx, conformance.Replica{Identity: identity, ClaimDuration: 6 * time.Second, LeaseDuration: 6 * time.Second})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// waitJob waits for the job's phase to be terminal and returns it.
func waitJob(t *testing.T, c client.Client, job client.Object, during func(context.Context) error) *v1alpha1.JobStatus {
	t.Helper()
	var st *v1alpha1.JobStatus
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, nil
		}
		switch j := job.(type) {
		case *v1alpha1.BackupJob:
			st = &j.Status.JobStatus
		case *v1alpha1.RestoreJob:
			st = &j.Status.JobStatus
		}
		if st.Phase.Terminal() {
			return true, nil
		}
		if during != nil {
			if err := during(ctx); err != nil {
				t.Logf("%v", err)
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%s never ended: %v (%+v)", job.GetName(), err, st)
	}
	return st
}

func checkEnded(t *testing.T, st *v1alpha1.JobStatus, phase v1alpha1.JobPhase, reason string, contains ...string) {
	t.Helper()
	c := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
	if st.Phase != phase || c == nil || c.Reason != reason {
		t.Fatalf("phase %s Ready %+v, want %s reason %s", st.Phase, c, phase, reason)
	}
	for _, s := range contains {
		if !strings.Contains(c.Message, s) {
			t.Errorf("message %q does not say %q", c.Message, s)
		}
	}
}

// The terminal CNPG phases end the run as the table says: failed is
// Failed BackendFailed with CNPG's error; a waiting phase that lasts past
// waitTimeout is Failed BackendFailed naming it; completed is Succeeded
// with the driver data of CNPG's status. A restore in place is refused.
func TestPhaseOutcomes(t *testing.T) {
	c := need(t)
	playApplications(t, c)
	replica(t, "outcomes-0")
	ns := namespace(t, c, "outcomes")
	ctx := context.Background()

	cnpgOf := func(job *v1alpha1.BackupJob) *cnpgv1.Backup {
		bk := &cnpgv1.Backup{}
		_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			objs, err := cnpgBackups(ctx, c, job.UID)
			if err != nil || len(objs) == 0 {
				return false, nil
			}
			bk = objs[0].(*cnpgv1.Backup)
			return true, nil
		})
		if bk.Name == "" {
			t.Fatalf("the driver created no CNPG Backup for %s", job.Name)
		}
		return bk
	}

	t.Run("failed", func(t *testing.T) {
		job := &v1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Name: "fails", Namespace: ns},
			Spec: v1alpha1.BackupJobSpec{ApplicationRef: app, BackupClassName: "cnpg"}}
		createBound(t, c, job, cnpgdriver.DefaultName, params(t, objectStoreParams()), nil)
		bk := cnpgOf(job)
		if err := setPhase(ctx, c, bk, cnpgv1.BackupPhaseRunning, ""); err != nil {
			t.Fatal(err)
		}
		if err := setPhase(ctx, c, bk, cnpgv1.BackupPhaseFailed, "barman-cloud-backup: exit status 4 (bucket not found)"); err != nil {
			t.Fatal(err)
		}
		st := waitJob(t, c, job, nil)
		checkEnded(t, st, v1alpha1.PhaseFailed, v1alpha1.ReasonBackendFailed, "bucket not found", bk.Name)
	})

	t.Run("waiting-bounded", func(t *testing.T) {
		p := objectStoreParams()
		p["waitTimeout"] = "2s"
		job := &v1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Name: "stuck", Namespace: ns},
			Spec: v1alpha1.BackupJobSpec{ApplicationRef: app, BackupClassName: "cnpg"}}
		createBound(t, c, job, cnpgdriver.DefaultName, params(t, p), nil)
		bk := cnpgOf(job)
		if err := setPhase(ctx, c, bk, cnpgv1.BackupPhaseWalArchivingFailing, ""); err != nil {
			t.Fatal(err)
		}
		st := waitJob(t, c, job, nil)
		checkEnded(t, st, v1alpha1.PhaseFailed, v1alpha1.ReasonBackendFailed, "walArchivingFailing", "waitTimeout 2s")
	})

	var done *v1alpha1.BackupJob
	t.Run("completed", func(t *testing.T) {
		job := &v1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Name: "completes", Namespace: ns},
			Spec: v1alpha1.BackupJobSpec{ApplicationRef: app, BackupClassName: "cnpg"}}
		createBound(t, c, job, cnpgdriver.DefaultName, params(t, objectStoreParams()), nil)
		bk := cnpgOf(job)
		// The Cluster was pointed at the object store with the projected
		// credentials before the backup.
		cl := &cnpgv1.Cluster{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: bk.Spec.Cluster.Name}, cl); err != nil {
			t.Fatal(err)
		}
		// ... at the namespace's own path, under the Cluster's own name
		// (k7-backup-driver.md, "Tenant isolation").
		path := cnpgdriver.TenantPath(destination, ns)
		if s := cl.Spec.Backup; s == nil || s.BarmanObjectStore == nil || s.BarmanObjectStore.DestinationPath != path ||
			s.BarmanObjectStore.ServerName != cl.Name || s.BarmanObjectStore.AWS == nil || s.BarmanObjectStore.AWS.AccessKeyIDReference == nil {
			t.Fatalf("Cluster %s spec.backup %+v, want the object store %s, server %s, with credentials", cl.Name, cl.Spec.Backup, path, cl.Name)
		}
		// ... the copy of the credentials the Cluster archives WAL with,
		// owned by the Cluster.
		ref := cl.Spec.Backup.BarmanObjectStore.AWS.AccessKeyIDReference.Name
		sec := &corev1.Secret{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref}, sec); err != nil {
			t.Fatal(err)
		}
		if ref != cnpgdriver.BackupSecretName(cl.Name) || len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].UID != cl.UID ||
			string(sec.Data[cnpgdriver.KeyAccessKeyID]) != "AKIA" {
			t.Errorf("credentials %s owned by %+v, want %s owned by the Cluster", ref, sec.OwnerReferences, cnpgdriver.BackupSecretName(cl.Name))
		}
		if err := completeBackup(ctx, c, bk); err != nil {
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
		if dd.BackupName != bk.Name || dd.ServerName != cl.Name || dd.DestinationPath != path || dd.BackupID == "" ||
			dd.BeginWal == "" || dd.EndWal == "" || dd.BeginLSN == "" || dd.EndLSN == "" || dd.StartedAt == nil || dd.StoppedAt == nil {
			t.Errorf("driverData %+v lacks CNPG's locator", dd)
		}
		if b.Spec.RestoreOverlay == nil || !strings.Contains(string(b.Spec.RestoreOverlay.Raw), `"recovery"`) {
			t.Errorf("restoreOverlay %v, want bootstrap.recovery", b.Spec.RestoreOverlay)
		}
		done = job
	})

	t.Run("in-place-refused", func(t *testing.T) {
		if done == nil {
			t.Skip("no Backup")
		}
		rj := &v1alpha1.RestoreJob{ObjectMeta: metav1.ObjectMeta{Name: "in-place", Namespace: ns},
			Spec: v1alpha1.RestoreJobSpec{BackupRef: v1alpha1.BackupRef{Name: done.Status.BackupName},
				Target: v1alpha1.RestoreTarget{Mode: v1alpha1.RestoreInPlace}}}
		createBound(t, c, rj, cnpgdriver.DefaultName, params(t, objectStoreParams()), nil)
		st := waitJob(t, c, rj, nil)
		checkEnded(t, st, v1alpha1.PhaseFailed, v1alpha1.ReasonCapabilityMissing, "cannot restore in place", string(v1alpha1.RestoreNewApplication))
	})
}
