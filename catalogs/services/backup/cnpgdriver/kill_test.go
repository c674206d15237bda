package cnpgdriver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// The driver binary killed (SIGKILL) mid-backup and restarted as another
// replica: the restarted one takes the stale claim over, adopts the CNPG
// Backup the first one created, and once CNPG completes it (this test
// writes its status as CNPG would) the job succeeds with exactly one CNPG
// Backup and one Backup.
func TestDriverKilledMidBackup(t *testing.T) {
	c := need(t)
	playApplications(t, c)
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "cnpg-backup-driver")
	build := exec.Command("go", "build", "-o", bin, "cozystack.io/catalogs/services/cmd/cnpg-backup-driver")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("go build the driver: %v", err)
	}
	const name = "cnpg-kill"
	run := func(identity string) *exec.Cmd {
		cmd := exec.Command(bin, "--kubeconfig", env.Kubeconfig, "--namespace", driverNamespace, "--name", name,
			"--identity", identity, "--lease-duration", "3s", "--claim-duration", "3s")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				_ = cmd.Wait()
			}
		})
		return cmd
	}
	ns := namespace(t, c, "killed")
	first := run("replica-a")
	job := &v1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
		Spec: v1alpha1.BackupJobSpec{ApplicationRef: app, BackupClassName: "cnpg"}}
	createBound(t, c, job, name, params(t, objectStoreParams()), nil)

	// Mid-run: the first replica claimed the job and created the CNPG
	// Backup, which CNPG has started.
	var bk *cnpgv1.Backup
	poll(t, "the first replica's CNPG Backup", func(ctx context.Context) bool {
		objs, err := cnpgBackups(ctx, c, job.UID)
		if err != nil || len(objs) != 1 {
			return false
		}
		bk = objs[0].(*cnpgv1.Backup)
		return true
	})
	if err := setPhase(ctx, c, bk, cnpgv1.BackupPhaseRunning, ""); err != nil {
		t.Fatal(err)
	}
	poll(t, "progress of the running backup", func(ctx context.Context) bool {
		_ = c.Get(ctx, client.ObjectKeyFromObject(job), job)
		return job.Status.Progress != nil && job.Status.Progress.Percent != nil && *job.Status.Progress.Percent == 50
	})
	if h := job.Status.Claim.HolderIdentity; h != "replica-a" {
		t.Fatalf("claim held by %q, want replica-a", h)
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	t.Logf("killed replica-a (%v) mid-backup", first.ProcessState)

	second := run("replica-b")
	poll(t, "replica-b taking the stale claim over", func(ctx context.Context) bool {
		_ = c.Get(ctx, client.ObjectKeyFromObject(job), job)
		return job.Status.Claim != nil && job.Status.Claim.HolderIdentity == "replica-b"
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(bk), bk); err != nil {
		t.Fatal(err)
	}
	if err := completeBackup(ctx, c, bk); err != nil {
		t.Fatal(err)
	}
	poll(t, "the job Succeeded", func(ctx context.Context) bool {
		_ = c.Get(ctx, client.ObjectKeyFromObject(job), job)
		if job.Status.Phase.Terminal() && job.Status.Phase != v1alpha1.PhaseSucceeded {
			t.Fatalf("job ended %s: %+v", job.Status.Phase, job.Status.Conditions)
		}
		return job.Status.Phase == v1alpha1.PhaseSucceeded
	})
	objs, err := cnpgBackups(ctx, c, job.UID)
	if err != nil {
		t.Fatal(err)
	}
	var all cnpgv1.BackupList
	if err := c.List(ctx, &all, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || len(all.Items) != 1 || objs[0].GetUID() != bk.UID {
		t.Errorf("%d CNPG Backups of the run (%d in the namespace), want exactly the first replica's %s", len(objs), len(all.Items), bk.Name)
	}
	if n := job.Status.Claim.Takeovers; n != 1 {
		t.Errorf("claim takeovers %d, want 1", n)
	}
	b := &v1alpha1.Backup{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Status.BackupName}, b); err != nil {
		t.Fatalf("the job's Backup: %v", err)
	}
	// The restarted binary stops cleanly on SIGTERM: exit code 0.
	if err := second.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.Wait(); err != nil {
		t.Errorf("the driver exited with %v on SIGTERM, want 0", err)
	}
}

func poll(t *testing.T, what string, cond func(ctx context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		return cond(ctx), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
