package plan_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/plan"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/testenv"
)

// No driver and no binder run in these tests: where a job's phase or a
// Backup's readiness matters, the test writes that status itself, as the
// driver would, by server-side apply as v1alpha1.DriverFieldManager("test").
var driverManager = v1alpha1.DriverFieldManager("test")

var (
	env *testenv.Env
	// c is an admin client knowing every kind used here.
	c client.Client
)

func TestMain(m *testing.M) { os.Exit(backuptest.Main(m, &env)) }

// need skips under -short, installs the CRDs once and makes the client c.
func need(t testing.TB) {
	t.Helper()
	c = backuptest.Client(t, env, "")
}

// poll is how often these tests look at a Plan's status.
const poll = 50 * time.Millisecond

// startReconciler runs one instance of the Plan reconciler (its own
// manager, cache narrowed to namespace ns) on clock clk until the end of
// the test.
func startReconciler(t *testing.T, ns string, clk *clocktesting.FakeClock) {
	t.Helper()
	backuptest.StartManager(t, env.Config, func(mgr ctrl.Manager) error {
		return plan.Setup(mgr, plan.Options{Clock: clk})
	}, func(o *ctrl.Options) {
		o.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}
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
	if err := c.Create(backuptest.Context(t), p); err != nil {
		t.Fatalf("create Plan: %v", err)
	}
	return p
}

func getPlan(t testing.TB, p *v1alpha1.Plan) *v1alpha1.Plan {
	t.Helper()
	out := &v1alpha1.Plan{}
	if err := c.Get(backuptest.Context(t), client.ObjectKeyFromObject(p), out); err != nil {
		t.Fatal(err)
	}
	return out
}

func updatePlan(t *testing.T, p *v1alpha1.Plan, change func(*v1alpha1.PlanSpec)) {
	t.Helper()
	cur := getPlan(t, p)
	patch := client.MergeFrom(cur.DeepCopy())
	change(&cur.Spec)
	if err := c.Patch(backuptest.Context(t), cur, patch); err != nil {
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
	if err := c.Patch(backuptest.Context(t), &v1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}},
		client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("tick: %v", err)
	}
}

// waitPlan waits until p's status satisfies cond and returns it.
func waitPlan(t testing.TB, p *v1alpha1.Plan, what string, cond func(*v1alpha1.Plan) error) *v1alpha1.Plan {
	t.Helper()
	var got *v1alpha1.Plan
	backuptest.EventuallyEvery(t, poll, 60*time.Second, what, func() error {
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
	if err := c.List(backuptest.Context(t), &list, client.InNamespace(p.Namespace), client.MatchingLabels{v1alpha1.LabelPlan: p.Name}); err != nil {
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
	if err := apply.Status(backuptest.Context(t), c, job, status, driverManager); err != nil {
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
