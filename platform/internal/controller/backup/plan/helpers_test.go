package plan_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/platform/internal/controller/backup/plan"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/install"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/testenv"
)

// No driver and no binder run in these tests: where a job's phase or a
// Backup's readiness matters, the test writes that status itself, as the
// driver would, by server-side apply as v1alpha1.DriverFieldManager("test").
var driverManager = v1alpha1.DriverFieldManager("test")

var (
	env     *testenv.Env
	c       client.Client
	crdOnce sync.Once
	crdErr  error
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

// need skips under -short, installs the CRDs once and makes the client.
func need(t testing.TB) {
	t.Helper()
	testenv.Need(t, env)
	crdOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if crdErr = install.CRDs(ctx, env.Config, ""); crdErr != nil {
			return
		}
		c, crdErr = client.New(env.Config, client.Options{Scheme: controllermanager.Scheme()})
	})
	if crdErr != nil {
		t.Fatal(crdErr)
	}
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// namespace creates a namespace for one test.
func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "plan-"}}
	if err := c.Create(testContext(t), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	return ns.Name
}

// startReconciler runs one instance of the Plan reconciler (its own
// manager, cache narrowed to namespace ns) on clock clk until the end of
// the test.
func startReconciler(t *testing.T, ns string, clk *clocktesting.FakeClock) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 controllermanager.Scheme(),
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Setup(mgr, plan.Options{Clock: clk}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager stopped with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop within 30s")
		}
	})
}

// planSpec is a Plan spec backing up Postgres db every minute.
func planSpec(cron string) v1alpha1.PlanSpec {
	return v1alpha1.PlanSpec{
		ApplicationRef:  v1alpha1.ApplicationRef{ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"}, Name: "db"},
		BackupClassName: "default",
		Schedule:        v1alpha1.Schedule{Cron: cron},
	}
}

func createPlan(t *testing.T, ns, name string, spec v1alpha1.PlanSpec) *v1alpha1.Plan {
	t.Helper()
	p := &v1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	if err := c.Create(testContext(t), p); err != nil {
		t.Fatalf("create Plan: %v", err)
	}
	return p
}

func getPlan(t testing.TB, p *v1alpha1.Plan) *v1alpha1.Plan {
	t.Helper()
	out := &v1alpha1.Plan{}
	if err := c.Get(testContext(t), client.ObjectKeyFromObject(p), out); err != nil {
		t.Fatal(err)
	}
	return out
}

func updatePlan(t *testing.T, p *v1alpha1.Plan, change func(*v1alpha1.PlanSpec)) {
	t.Helper()
	cur := getPlan(t, p)
	patch := client.MergeFrom(cur.DeepCopy())
	change(&cur.Spec)
	if err := c.Patch(testContext(t), cur, patch); err != nil {
		t.Fatalf("update Plan: %v", err)
	}
}

var ticks atomic.Int64

// tick asks for a pass over p (an annotation change, as `flux reconcile`
// sets reconcile.fluxcd.io/requestedAt): the fake clock moves no
// workqueue timer.
func tick(t testing.TB, p *v1alpha1.Plan) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"test.cozystack.io/tick":"%d"}}}`, ticks.Add(1)))
	if err := c.Patch(testContext(t), &v1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}},
		client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("tick: %v", err)
	}
}

// eventually polls cond until it returns nil, failing the test with its
// last error after timeout.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = cond()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s: %v", what, timeout, last)
	}
}

// waitPlan waits until p's status satisfies cond and returns it.
func waitPlan(t testing.TB, p *v1alpha1.Plan, what string, cond func(*v1alpha1.Plan) error) *v1alpha1.Plan {
	t.Helper()
	var got *v1alpha1.Plan
	eventually(t, 60*time.Second, what, func() error {
		got = &v1alpha1.Plan{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		if err := cond(got); err != nil {
			return fmt.Errorf("%w\nstatus: %s", err, statusString(got))
		}
		return nil
	})
	return got
}

// handled says the run due at t was acted on: started or skipped.
func handled(at time.Time) func(*v1alpha1.Plan) error {
	return func(p *v1alpha1.Plan) error {
		s := p.Status
		if s.LastScheduleTime != nil && s.LastScheduleTime.Equal(&metav1.Time{Time: at}) ||
			s.LastSkipped != nil && s.LastSkipped.Time.Equal(&metav1.Time{Time: at}) {
			return nil
		}
		return fmt.Errorf("the run due at %s is not handled yet", at.UTC().Format(time.RFC3339))
	}
}

func statusString(p *v1alpha1.Plan) string {
	s := p.Status
	var b strings.Builder
	fmt.Fprintf(&b, "observedGeneration=%d last=%v next=%v lastSuccessful=%v active=%v", s.ObservedGeneration,
		timeString(s.LastScheduleTime), timeString(s.NextScheduleTime), timeString(s.LastSuccessfulTime), s.Active)
	if s.LastSkipped != nil {
		fmt.Fprintf(&b, " lastSkipped={%s %s %q}", s.LastSkipped.Time.UTC().Format(time.RFC3339), s.LastSkipped.Reason, s.LastSkipped.Message)
	}
	for _, c := range s.Conditions {
		fmt.Fprintf(&b, " %s=%s/%s(%q)", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

func timeString(t *metav1.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// jobs lists p's BackupJobs from the API server, by name.
func jobs(t testing.TB, p *v1alpha1.Plan) map[string]*v1alpha1.BackupJob {
	t.Helper()
	var list v1alpha1.BackupJobList
	if err := c.List(testContext(t), &list, client.InNamespace(p.Namespace), client.MatchingLabels{v1alpha1.LabelPlan: p.Name}); err != nil {
		t.Fatal(err)
	}
	out := map[string]*v1alpha1.BackupJob{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

func activeJobs(all map[string]*v1alpha1.BackupJob) []string {
	var out []string
	for name, j := range all {
		if !j.Status.Phase.Terminal() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// finish ends job as its driver would: phase and completionTime.
func finish(t testing.TB, job *v1alpha1.BackupJob, phase v1alpha1.JobPhase, at time.Time) {
	t.Helper()
	status := map[string]any{"phase": string(phase), "completionTime": at.UTC().Format(time.RFC3339)}
	if err := apply.Status(testContext(t), c, job, status, driverManager); err != nil {
		t.Fatalf("finish %s: %v", job.Name, err)
	}
}

// firstMinute is the first whole minute after p was created: the first
// time a "* * * * *" Plan comes due. The fake clocks start there, as the
// API server stamps creationTimestamp with the real time.
func firstMinute(p *v1alpha1.Plan) time.Time {
	return p.CreationTimestamp.Time.Truncate(time.Minute).Add(time.Minute)
}

func conditionIs(p *v1alpha1.Plan, typ string, status metav1.ConditionStatus, reason string, msg ...string) error {
	cond := apimeta.FindStatusCondition(p.Status.Conditions, typ)
	if cond == nil {
		return fmt.Errorf("no %s condition", typ)
	}
	if cond.Status != status || cond.Reason != reason || cond.ObservedGeneration != p.Generation {
		return fmt.Errorf("%s=%s/%s (generation %d), want %s/%s (generation %d)", typ, cond.Status, cond.Reason, cond.ObservedGeneration, status, reason, p.Generation)
	}
	for _, m := range msg {
		if !strings.Contains(cond.Message, m) {
			return fmt.Errorf("%s message %q lacks %q", typ, cond.Message, m)
		}
	}
	return nil
}
