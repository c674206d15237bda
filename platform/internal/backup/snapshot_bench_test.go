package backup_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"cozystack.io/platform/internal/backup/backuptest"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// snapshotJobs is the number of BackupJobs measured per application.
const snapshotJobs = 5

// etcdState is what etcd stores at one revision: the size of its database
// in use (every revision not yet compacted, with bbolt's overhead), the
// bytes of the current values of the cluster's objects (keys under
// /registry/), and of those the backup core and framework own: the
// backups.cozystack.io objects and the snapshot ConfigMaps.
type etcdState struct {
	rev, inUse, live, backupLive int64
}

// backupKey is true for the key of a backups.cozystack.io object or of a
// snapshot ConfigMap.
func backupKey(k string) bool {
	return strings.HasPrefix(k, "/registry/backups.cozystack.io/") ||
		(strings.HasPrefix(k, "/registry/configmaps/") && strings.Contains(k, "/snapshot-"))
}

func etcdClient(t testing.TB) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{fmt.Sprintf("127.0.0.1:%d", env.Ports.Etcd)}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func measureEtcd(t testing.TB, cli *clientv3.Client) etcdState {
	t.Helper()
	ctx := backuptest.Context(t)
	endpoint := cli.Endpoints()[0]
	st, err := cli.Status(ctx, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(ctx, "/registry/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	e := etcdState{rev: resp.Header.Revision, inUse: st.DbSizeInUse}
	for _, kv := range resp.Kvs {
		n := int64(len(kv.Key) + len(kv.Value))
		e.live += n
		if backupKey(string(kv.Key)) {
			e.backupLive += n
		}
	}
	return e
}

// written returns the bytes of every value etcd stored in the revisions
// (from, to]: each create and each update of an object is one, whole.
func written(t testing.TB, cli *clientv3.Client, from, to int64) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var n int64
	for resp := range cli.Watch(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithRev(from+1)) {
		if err := resp.Err(); err != nil {
			t.Fatal(err)
		}
		for _, ev := range resp.Events {
			if ev.Kv.ModRevision > to {
				return n
			}
			n += int64(len(ev.Kv.Key) + len(ev.Kv.Value))
		}
		if resp.Header.Revision >= to && len(resp.Events) > 0 && resp.Events[len(resp.Events)-1].Kv.ModRevision >= to {
			return n
		}
	}
	t.Fatal("watch ended before revision", to)
	return 0
}

// growth is what one measured BackupJob costs etcd, in bytes, on average.
type growth struct {
	// inUse: etcd's database in use (uncompacted revisions included);
	// written: the values of every revision the jobs' writes stored;
	// live: the current objects; backupLive: the backup objects among
	// them (the jobs, the Backups, the snapshot ConfigMaps), without the
	// driver's backend objects (batch Jobs) and events.
	inUse, written, live, backupLive float64
	// jobStatus is the largest stored BackupJob, in bytes.
	jobStatus int
}

// snapshotGrowth runs, with cozystack-controller's backup core and Job
// driver as their own processes, one BackupJob of the application (its
// snapshot is stored once), then snapshotJobs more, each bound, claimed,
// its batch Job completed as the Job controller would, Succeeded with a
// Backup; and measures etcd across the latter.
func snapshotGrowth(t testing.TB, ns, values string) growth {
	t.Helper()
	cli := etcdClient(t)
	backuptest.Namespace(t, c, ns)
	application(t, ns, "vm", values)
	run := func(name string) *backupsv1alpha1.BackupJob {
		job := &backupsv1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: backupsv1alpha1.BackupJobSpec{
			ApplicationRef: backupsv1alpha1.ApplicationRef{
				ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: appKind}, Name: "vm"},
			BackupClassName: "snapshot-growth"}}
		if err := c.Create(backuptest.Context(t), job); err != nil {
			t.Fatal(err)
		}
		key := types.NamespacedName{Namespace: ns, Name: name}
		backuptest.Eventually(t, 90*time.Second, "BackupJob "+name+" running its batch Job", func() error {
			j := getJob(t, key)
			jobs := batchJobs(t, ns, j.UID)
			if len(jobs) != 1 {
				return fmt.Errorf("phase %q, %d batch Jobs, conditions %v", j.Status.Phase, len(jobs), j.Status.Conditions)
			}
			if len(jobs[0].Status.Conditions) == 0 {
				complete(t, &jobs[0])
			}
			return nil
		})
		var j *backupsv1alpha1.BackupJob
		backuptest.Eventually(t, 90*time.Second, "BackupJob "+name+" Succeeded with a Ready Backup", func() error {
			j = getJob(t, key)
			if j.Status.Phase != backupsv1alpha1.PhaseSucceeded || j.Status.BackupName == "" {
				return fmt.Errorf("phase %q, conditions %v", j.Status.Phase, j.Status.Conditions)
			}
			b := &backupsv1alpha1.Backup{}
			if err := c.Get(backuptest.Context(t), types.NamespacedName{Namespace: ns, Name: j.Status.BackupName}, b); err != nil {
				return err
			}
			if !apimeta.IsStatusConditionTrue(b.Status.Conditions, backupsv1alpha1.ConditionReady) {
				return fmt.Errorf("Backup not Ready")
			}
			return nil
		})
		return j
	}
	run("first")
	time.Sleep(2 * time.Second) // the trailing writes of the first job
	before := measureEtcd(t, cli)
	var g growth
	for i := range snapshotJobs {
		j := run(fmt.Sprintf("job-%d", i))
		if raw, err := json.Marshal(j); err == nil && len(raw) > g.jobStatus {
			g.jobStatus = len(raw)
		}
	}
	time.Sleep(2 * time.Second) // the Backups' owners, the last events
	after := measureEtcd(t, cli)
	g.inUse = float64(after.inUse-before.inUse) / snapshotJobs
	g.live = float64(after.live-before.live) / snapshotJobs
	g.backupLive = float64(after.backupLive-before.backupLive) / snapshotJobs
	g.written = float64(written(t, cli, before.rev, after.rev)) / snapshotJobs
	return g
}

// bigApplication is a VMInstance-like spec of about 1 MB: a
// 1,000,000-character cloudInit.
func bigApplication() string {
	return `{"size":"10Gi","cloudInit":"#cloud-config\n` + strings.Repeat("x", 1_000_000) + `"}`
}

// startSnapshotCore runs the backup core and the Job driver, and the
// BackupClass snapshot-growth.
func startSnapshotCore(t testing.TB) {
	start(t, "core", "--controllers=backup-core,backup-job-driver", "--install-crds")
	jobClass(t, "snapshot-growth")
}

// BenchmarkSnapshotGrowth measures what one BackupJob of an application
// costs etcd, for an application of about 1 MB (a 1,000,000-character
// cloudInit) and side by side for a small one (20 bytes of values): the
// growth of etcd's database in use (etcd-B/job: every revision, as
// nothing is compacted meanwhile), the bytes of the revisions written
// (written-B/job) and of the objects kept (live-B/job), averaged over
// snapshotJobs jobs after a first one stored the snapshot. Each
// application's jobs run once whatever b.N. Before snapshots by reference the 1 MB
// application cost about 1 MB per revision of each job (the values were
// in every BackupJob status and Backup).
func BenchmarkSnapshotGrowth(b *testing.B) {
	need(b)
	startSnapshotCore(b)
	for _, tc := range []struct{ name, values string }{
		{"app=1MB", bigApplication()},
		{"app=20B", `{"size":"10Gi","x":1}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g := snapshotGrowth(b, "snapshot-bench-"+strings.ToLower(strings.TrimPrefix(tc.name, "app=")), tc.values)
			b.Logf("%s: per BackupJob etcd in use +%.0f B, revisions written %.0f B, live objects +%.0f B of which backup objects +%.0f B; the largest BackupJob %d B",
				tc.name, g.inUse, g.written, g.live, g.backupLive, g.jobStatus)
			b.ReportMetric(g.inUse, "etcd-B/job")
			b.ReportMetric(g.written, "written-B/job")
			b.ReportMetric(g.live, "live-B/job")
			b.ReportMetric(g.backupLive, "backup-B/job")
		})
	}
}

// TestSnapshotGrowth is the acceptance bound of snapshots by reference: a
// BackupJob of a 1 MB application adds under 10 KB of backup objects to
// etcd (its BackupJob, its Backup, its share of the snapshot), and no
// revision any of its writes stores carries the application's values:
// all it writes to etcd, the driver's batch Job and the events included,
// stays far below the application's size (before: about 1 MB per
// revision of the job and of its Backup).
func TestSnapshotGrowth(t *testing.T) {
	need(t)
	startSnapshotCore(t)
	g := snapshotGrowth(t, "snapshot-growth", bigApplication())
	t.Logf("per BackupJob of a 1 MB application: etcd in use +%.0f B, revisions written %.0f B, live objects +%.0f B of which backup objects +%.0f B; the largest BackupJob %d B",
		g.inUse, g.written, g.live, g.backupLive, g.jobStatus)
	if g.backupLive >= 10_000 {
		t.Errorf("each BackupJob of a 1 MB application adds %.0f B of backup objects to etcd, want under 10,000", g.backupLive)
	}
	if g.jobStatus >= 10_000 {
		t.Errorf("a BackupJob of a 1 MB application is %d B, want under 10,000", g.jobStatus)
	}
	if g.written >= 100_000 || g.inUse >= 200_000 {
		t.Errorf("the writes of each BackupJob of a 1 MB application store %.0f B in etcd revisions (its database grows %.0f B), want well under the application's 1,000,000: no copy of the values", g.written, g.inUse)
	}
}
