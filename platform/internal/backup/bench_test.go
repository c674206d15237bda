package backup_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	coordinationv1 "k8s.io/api/coordination/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/install"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/localcp"
)

// benchPlans is the scale of the scheduling benchmark: Plans
// due in the same minute.
const benchPlans = 1000

// BenchmarkPlansDueTogether measures, with the backup core as its own
// cozystack-controller process (--controllers=backup-core), the time from
// a minute at which 1,000 Plans are all due to every one of their
// BackupJobs created, and to every one bound (DriverBound=True), and the
// process's peak resident memory. The driver is a registration with a
// live Lease written by the benchmark, and nothing claims the jobs, so
// only the core's work is measured. Side by side, in one run: 4 workers
// per reconciler at the binary's client rate limit (--kube-api-qps 200)
// and at a raised one, the default 16 workers, and the floor: the writes
// the core cannot avoid (create each job, apply its binding, label it)
// sent by a bare client with 16 workers, no reads and no decisions. Each
// runs once whatever b.N (the setup alone takes a minute).
func BenchmarkPlansDueTogether(b *testing.B) {
	need(b)
	benchDriver(b)
	benchClass(b)
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"core/concurrency=4", []string{"--backup-concurrency=4"}},
		{"core/concurrency=4,qps=1000", []string{"--backup-concurrency=4", "--kube-api-qps=1000", "--kube-api-burst=2000"}},
		{"core/concurrency=16", []string{"--backup-concurrency=16"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			name := strings.NewReplacer("core/", "", "=", "-", ",", "-").Replace(tc.name)
			plansDueTogether(b, "backup-bench-"+name, tc.flags...)
		})
	}
	b.Run("floor", benchFloor)
}

// benchFloor sends, with 16 workers, the writes binding 1,000 jobs takes
// at the least: create the BackupJob, apply its status (binding,
// DriverBound), label it with its driver.
func benchFloor(b *testing.B) {
	ctx := context.Background()
	ns := "backup-bench-floor"
	backuptest.Namespace(b, c, ns)
	before := apiRequests(b)
	start := time.Now()
	parallel(b, benchPlans, func(i int) error {
		j := &backupsv1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%04d-1", i),
			Labels: map[string]string{backupsv1alpha1.LabelPlan: fmt.Sprintf("p%04d", i)}}, Spec: backupsv1alpha1.BackupJobSpec{
			ApplicationRef: backupsv1alpha1.ApplicationRef{
				ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: appKind}, Name: fmt.Sprintf("db%04d", i)},
			BackupClassName: "bench"}}
		if err := c.Create(ctx, j); err != nil {
			return err
		}
		st := backupsv1alpha1.BackupJobStatus{JobStatus: backupsv1alpha1.JobStatus{Phase: backupsv1alpha1.PhasePending,
			Binding: &backupsv1alpha1.Binding{DriverRef: backupsv1alpha1.DriverRef{Name: "bench", ProtocolVersion: backupsv1alpha1.ProtocolVersion},
				Strategy: backupsv1alpha1.Strategy{Kind: "Bench"}, BackupClassName: "bench", Timeouts: (&backupsv1alpha1.BackupClass{}).Timeouts(), BoundTime: metav1.Now()},
			Conditions: []metav1.Condition{{Type: backupsv1alpha1.ConditionDriverBound, Status: metav1.ConditionTrue, Reason: backupsv1alpha1.ReasonBound, Message: "bound", LastTransitionTime: metav1.Now()}}}}
		if err := apply.Status(ctx, c, j, st, backupsv1alpha1.CoreFieldManager); err != nil {
			return err
		}
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+backupsv1alpha1.LabelDriver+`":"bench"}}}`))
		return c.Patch(ctx, j, patch, client.FieldOwner(backupsv1alpha1.CoreFieldManager))
	})
	d := time.Since(start)
	b.Logf("floor: %d jobs created, bound and labelled by a bare client (16 workers) in %s", benchPlans, d.Round(10*time.Millisecond))
	delta, total, writes := requestsBetween(before, apiRequests(b))
	b.Logf("floor: API requests %s", formatRequests(delta))
	b.ReportMetric(d.Seconds(), "s-bound")
	b.ReportMetric(total/benchPlans, "requests/job")
	b.ReportMetric(writes/benchPlans, "writes/job")
}

func plansDueTogether(b *testing.B, ns string, flags ...string) {
	core := start(b, "core", append([]string{"--controllers=backup-core", "--install-crds"}, flags...)...)
	ctx := context.Background()
	backuptest.Namespace(b, c, ns)
	setupStart := time.Now()
	parallel(b, benchPlans, func(i int) error {
		return createApplication(ctx, ns, fmt.Sprintf("db%04d", i), `{"size":"1Gi"}`)
	})
	// Due at a minute boundary at least 30 s away, so every Plan exists
	// before it (creating 1,000 Plans takes seconds).
	due := time.Now().UTC().Add(30 * time.Second).Truncate(time.Minute).Add(time.Minute)
	cron := fmt.Sprintf("%d %d * * *", due.Minute(), due.Hour())
	parallel(b, benchPlans, func(i int) error {
		p := &backupsv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%04d", i)}, Spec: backupsv1alpha1.PlanSpec{
			ApplicationRef: backupsv1alpha1.ApplicationRef{
				ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: appKind}, Name: fmt.Sprintf("db%04d", i)},
			BackupClassName: "bench", Schedule: backupsv1alpha1.Schedule{Cron: cron},
		}}
		return client.IgnoreAlreadyExists(c.Create(ctx, p))
	})
	// The next sub-benchmark's core must not find these Plans.
	b.Cleanup(func() {
		_ = c.DeleteAllOf(context.Background(), &backupsv1alpha1.Plan{}, client.InNamespace(ns))
	})
	b.Logf("created %d applications and Plans in %s; all due at %s", benchPlans, time.Since(setupStart).Round(time.Millisecond), due.Format(time.RFC3339))
	time.Sleep(time.Until(due))
	before := apiRequests(b)

	var created, bound time.Duration
	deadline := due.Add(10 * time.Minute)
	for time.Now().Before(deadline) && bound == 0 {
		var list backupsv1alpha1.BackupJobList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		n := 0
		for i := range list.Items {
			if apimeta.IsStatusConditionTrue(list.Items[i].Status.Conditions, backupsv1alpha1.ConditionDriverBound) {
				n++
			}
		}
		if created == 0 && len(list.Items) >= benchPlans {
			created = time.Since(due)
		}
		if n >= benchPlans {
			bound = time.Since(due)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if bound == 0 {
		b.Fatalf("not every BackupJob bound within 10 minutes of %s", due)
	}
	rss := peakRSS(b, core.cmd.Process.Pid)
	delta, total, writes := requestsBetween(before, apiRequests(b))
	b.Logf("API requests from the minute due to every job bound (every client but this benchmark's polling): %s", formatRequests(delta))
	b.Logf("%d Plans due at once: every BackupJob created after %s, bound after %s; core peak RSS %d MiB",
		benchPlans, created.Round(10*time.Millisecond), bound.Round(10*time.Millisecond), rss>>20)
	b.ReportMetric(created.Seconds(), "s-created")
	b.ReportMetric(bound.Seconds(), "s-bound")
	b.ReportMetric(float64(rss>>20), "MiB-peak-RSS")
	b.ReportMetric(total/benchPlans, "requests/job")
	b.ReportMetric(writes/benchPlans, "writes/job")
}

// benchDriver registers the driver "bench" serving strategy kind Bench,
// with a Lease renewed for the benchmark's whole length, the way the SDK
// would register one.
func benchDriver(b *testing.B) {
	b.Helper()
	ctx := context.Background()
	if err := install.CRDs(ctx, env.Config, "cozy-system"); err != nil {
		b.Fatal(err)
	}
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "cozy-system", Name: "backup-driver-bench",
		Labels: map[string]string{backupsv1alpha1.LabelDriver: "bench"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("bench"), LeaseDurationSeconds: ptr.To[int32](3600), RenewTime: &now, AcquireTime: &now}}
	backuptest.Eventually(b, 60*time.Second, "Lease created", func() error { return client.IgnoreAlreadyExists(c.Create(ctx, lease)) })
	d := &backupsv1alpha1.BackupDriver{ObjectMeta: metav1.ObjectMeta{Name: "bench"}, Spec: backupsv1alpha1.BackupDriverSpec{
		StrategyKinds: []string{"Bench"}, ProtocolVersions: []string{backupsv1alpha1.ProtocolVersion},
		Lease: backupsv1alpha1.LeaseRef{Namespace: lease.Namespace, Name: lease.Name},
	}}
	backuptest.Eventually(b, 60*time.Second, "BackupDriver created", func() error { return client.IgnoreAlreadyExists(c.Create(ctx, d)) })
}

func benchClass(b *testing.B) {
	b.Helper()
	bc := &backupsv1alpha1.BackupClass{ObjectMeta: metav1.ObjectMeta{Name: "bench"}, Spec: backupsv1alpha1.BackupClassSpec{
		Strategies: []backupsv1alpha1.ClassStrategy{{
			ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: appKind},
			Strategy:        backupsv1alpha1.Strategy{Kind: "Bench"},
		}},
	}}
	backuptest.Eventually(b, 60*time.Second, "BackupClass created", func() error {
		return client.IgnoreAlreadyExists(c.Create(context.Background(), bc))
	})
}

// parallel runs f(0..n-1), 16 at a time, failing b on the first error.
func parallel(b *testing.B, n int, f func(i int) error) {
	b.Helper()
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error { return f(i) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(b *testing.B, pid int) int64 {
	b.Helper()
	n, err := localcp.PeakRSS(pid)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
