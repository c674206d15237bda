package velerodriver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// The driver binary killed mid-backup (SIGKILL, after it created the
// Velero Backup) and started again: the new process takes the stale claim
// over and adopts the Velero Backup; once Velero (the test, writing its
// status as Velero would) completes it, the job succeeds with exactly one
// Velero Backup.
func TestKilledMidBackup(t *testing.T) {
	c := need(t)
	ns := namespace(t, c)
	bin := filepath.Join(t.TempDir(), "velero-backup-driver")
	build := exec.Command("go", "build", "-o", bin, "cozystack.io/catalogs/virtualization/cmd/velero-backup-driver")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("go build: %v", err)
	}
	start := func(identity string) *exec.Cmd {
		cmd := exec.Command(bin, "--kubeconfig", env.Kubeconfig, "--namespace", driverNamespace, "--identity", identity,
			"--velero-namespace", veleroNamespace, "--lease-duration", "3s", "--claim-duration", "3s", "--verify-interval", "1s")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_, _ = cmd.Process.Wait()
		})
		return cmd
	}
	first := start("killed-0")
	job := backupJob(t, c, ns, "survives", "", params(t, map[string]any{"storageLocation": "default"}))
	vb := veleroBackupOf(t, c, job.UID)
	poll(t, "the run claimed and running", func(ctx context.Context) (bool, error) {
		j := getJob(t, c, ns, job.Name)
		return j.Status.Phase == v1alpha1.PhaseRunning && j.Status.Claim != nil && j.Status.Claim.HolderIdentity == "killed-0", nil
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = first.Process.Wait()
	// Velero works on the backup meanwhile.
	st := completed(4)
	st.Phase = velerov1.BackupPhaseInProgress
	if err := setBackupStatus(context.Background(), c, client.ObjectKeyFromObject(vb), st); err != nil {
		t.Fatal(err)
	}
	start("restarted-1")
	poll(t, "the restarted driver taking the run over", func(ctx context.Context) (bool, error) {
		cl := getJob(t, c, ns, job.Name).Status.Claim
		return cl != nil && cl.HolderIdentity == "restarted-1", nil
	})
	if err := setBackupStatus(context.Background(), c, client.ObjectKeyFromObject(vb), completed(4)); err != nil {
		t.Fatal(err)
	}
	done := waitJob(t, c, ns, job.Name)
	if done.Status.Phase != v1alpha1.PhaseSucceeded || done.Status.BackupName == "" {
		t.Fatalf("job ended %s (backup %q)", done.Status.Phase, done.Status.BackupName)
	}
	var list velerov1.BackupList
	if err := c.List(context.Background(), &list, client.MatchingLabels{v1alpha1.LabelRun: string(job.UID)}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].UID != vb.UID {
		t.Errorf("%d Velero Backups for the run, want the one first created", len(list.Items))
	}
	if done.Status.Claim == nil || done.Status.Claim.Takeovers != 1 {
		t.Errorf("claim %+v, want one takeover", done.Status.Claim)
	}
}
