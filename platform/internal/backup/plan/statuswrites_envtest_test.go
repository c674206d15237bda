package plan_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/plan"
)

// A pass that changes nothing in a Plan's status sends no status write:
// most passes are woken by a job created, bound or ended and find the
// status as the previous pass applied it, and a server-side apply that
// changes nothing still costs kube-apiserver a merge (1,000 Plans due
// together made twice as many status applies as Plans,
// BenchmarkPlansDueTogether's requests/job). The first pass writes the
// status; a second, at the same time, sends nothing and the status stays.
func TestUnchangedStatusIsNotWritten(t *testing.T) {
	need(t)
	ctx := backuptest.Context(t)
	ns := backuptest.TempNamespace(t, c, "plan-writes-")
	p := createPlan(t, ns, "yearly", planSpec("0 0 1 1 *"))
	w, err := client.NewWithWatch(env.Config, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	var applies atomic.Int32
	counting := interceptor.NewClient(w, interceptor.Funcs{
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			applies.Add(1)
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	r := plan.NewReconciler(counting, c, clocktesting.NewFakeClock(p.CreationTimestamp.Add(time.Second)))
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	if n := applies.Load(); n != 1 {
		t.Fatalf("first pass sent %d status applies, want 1 (the Plan had no status)", n)
	}
	first := getPlan(t, p)
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("second pass: %v", err)
	}
	if n := applies.Load(); n != 1 {
		t.Errorf("second pass, nothing changed, sent %d status applies in all, want still 1", n)
	}
	if second := getPlan(t, p); statusString(second) != statusString(first) || second.ResourceVersion != first.ResourceVersion {
		t.Errorf("status changed by a pass that had nothing to change:\nfirst  %s\nsecond %s", statusString(first), statusString(second))
	}
}
