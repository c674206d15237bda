package application

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/applicationdefinitions"
	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/platform/internal/quotatree"
)

// tenantKind is the platform's Tenant kind, compiled from its embedded
// ApplicationDefinition (platform/applicationdefinitions/tenant.yaml).
func tenantKind(t *testing.T) *appkinds.Kind {
	t.Helper()
	objs, err := applicationdefinitions.Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() != "ApplicationDefinition" || o.GetName() != "tenant" {
			continue
		}
		data, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		ad := &v1alpha1.ApplicationDefinition{}
		if err := json.Unmarshal(data, ad); err != nil {
			t.Fatal(err)
		}
		return compileKind(t, ad)
	}
	t.Fatal("no ApplicationDefinition tenant")
	return nil
}

// tenantFixture is a fixture of the Tenant kind whose storage reads
// namespaces from a running informer, as cozystack-api does.
func tenantFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, tenantKind(t))
	factory := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(env.Config), 0)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	lister := factory.Core().V1().Namespaces().Lister()
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	f.rest = NewREST(f.kind, Backend{Client: f.c, Lister: newLister(t), Namespaces: lister})
	return f
}

// in returns the context of a request in namespace ns.
func in(ns string) context.Context { return genericapirequest.WithNamespace(context.Background(), ns) }

// createIn creates Tenant name with spec (YAML) in namespace ns.
func (f *fixture) createIn(ns, name, spec string) error {
	_, err := f.rest.Create(in(ns), f.newApp(name, `{spec: `+spec+`}`), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	return err
}

// updateIn replaces Tenant name's spec in namespace ns.
func (f *fixture) updateIn(ns, name, spec string) error {
	obj := f.newApp(name, `{spec: `+spec+`}`)
	obj.SetNamespace(ns)
	_, _, err := f.rest.Update(in(ns), name, rest.DefaultUpdatedObjectInfo(obj), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	return err
}

// tenantNamespace makes namespace TenantNamespace(parent, name) as the
// tenant chart renders it: labelled as Tenant parent/name with host, and,
// with hard limits, its ResourceQuota tenant-quota. It waits until the
// server's namespace informer knows it.
func (f *fixture) tenantNamespace(parent, name, host string, hard corev1.ResourceList) string {
	f.t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: TenantNamespace(parent, name), Labels: map[string]string{
		v1alpha1.LabelTenant: name, v1alpha1.LabelParent: parent, v1alpha1.LabelHost: host,
	}}}
	if err := f.c.Create(ctx, ns); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = f.c.Delete(context.Background(), ns) })
	if len(hard) > 0 {
		rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: quotatree.TenantQuotaName}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
		if err := f.c.Create(ctx, rq); err != nil {
			f.t.Fatal(err)
		}
	}
	f.waitNamespaceKnown(ns.Name)
	return ns.Name
}

func (f *fixture) waitNamespaceKnown(name string) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := f.rest.strategy.ns.Get(name); err == nil {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("namespace %s never reached the informer", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// refused checks that err is a 422 with a cause at field whose message
// holds every phrase and the rule.
func refused(t *testing.T, what string, err error, field string, phrases ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want refused at %s", what, field)
		return
	}
	for _, c := range causes(t, err) {
		if c != field {
			continue
		}
		for _, p := range phrases {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("%s: %v\nwant it to say %q", what, err, p)
			}
		}
		return
	}
	t.Errorf("%s: %v, want a cause at %s", what, err, field)
}

func quantities(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// The quota attack: a super-admin of a tenant capped at
// cpu: 1, count/pods: 5 gave a child cpu: 100k, or no quota at all, and
// any number of children. The quota tree (contract K2, Tenant quotas)
// refuses each: a child limits every resource its parent limits, within
// what the parent has left (its limit minus its other children's minus its
// own use), and the parent's spec.childTenants bounds the children.
func TestTenantQuotaTree(t *testing.T) {
	f := tenantFixture(t)
	grand := f.ns
	host := grand + ".example.org"
	if err := f.createIn(grand, "p", `{resourceQuotas: {cpu: 1, count/pods: 5}, childTenants: 3}`); err != nil {
		t.Fatal(err)
	}
	p := f.tenantNamespace(grand, "p", "p."+host, quantities("cpu", "1", "count/pods", "5"))

	// The parent uses 200m of its cpu itself.
	waitQuotaStatus(t, f.c, p, quotatree.TenantQuotaName, func(rq *corev1.ResourceQuota) bool { return len(rq.Status.Hard) == 2 })
	createPod(t, f.c, p, "own", "200m")
	waitQuotaStatus(t, f.c, p, quotatree.TenantQuotaName, func(rq *corev1.ResourceQuota) bool {
		q := rq.Status.Used[corev1.ResourceCPU]
		return q.Cmp(resource.MustParse("200m")) == 0
	})

	refused(t, "cpu 100k under cpu 1", f.createIn(p, "big", `{resourceQuotas: {cpu: 100k, count/pods: 1}}`),
		"spec.resourceQuotas[cpu]", "100k exceeds what the parent has left", "limited to 1 cpu (spec.resourceQuotas of Tenant "+grand+"/p)",
		"uses 200m itself", "leaves 800m", "at most 800m", "contract K2, Tenant quotas")
	err := f.createIn(p, "none", `{}`)
	refused(t, "no quota under a capped parent", err, "spec.resourceQuotas[cpu]", "must limit every resource its parent limits", "at most 800m")
	refused(t, "no quota under a capped parent", err, "spec.resourceQuotas[count/pods]", "limited to 5 count/pods", "at most 4")

	if err := f.createIn(p, "a", `{resourceQuotas: {cpu: 600m, count/pods: 2}}`); err != nil {
		t.Fatalf("a child within the parent's limits: %v", err)
	}
	refused(t, "a second child beyond what is left", f.createIn(p, "b", `{resourceQuotas: {cpu: 300m, count/pods: 1}}`),
		"spec.resourceQuotas[cpu]", "its other child Tenants hold 600m (a: 600m)", "leaves 200m")
	refused(t, "pods beyond what is left", f.createIn(p, "b", `{resourceQuotas: {cpu: 200m, count/pods: 3}}`),
		"spec.resourceQuotas[count/pods]", "limited to 5 count/pods", "hold 2 (a: 2) and it uses 1 itself, which leaves 2")
	if err := f.createIn(p, "b", `{resourceQuotas: {cpu: 200m, count/pods: 2}}`); err != nil {
		t.Fatalf("a child taking the rest: %v", err)
	}
	// Nothing is left; a child's unrelated update is not refused for it,
	// but growing is.
	if err := f.updateIn(p, "a", `{resourceQuotas: {cpu: 600m, count/pods: 2}, monitoring: true}`); err != nil {
		t.Errorf("an update keeping the limits: %v", err)
	}
	refused(t, "growing beyond what is left", f.updateIn(p, "a", `{resourceQuotas: {cpu: 700m, count/pods: 2}}`),
		"spec.resourceQuotas[cpu]", "700m exceeds")
	refused(t, "dropping a limit", f.updateIn(p, "a", `{resourceQuotas: {cpu: 600m}}`), "spec.resourceQuotas[count/pods]", "must limit every resource")

	// The parent's own limit cannot shrink below what its children hold.
	refused(t, "shrinking the parent", f.updateIn(grand, "p", `{resourceQuotas: {cpu: 500m, count/pods: 5}, childTenants: 3}`),
		"spec.resourceQuotas[cpu]", "500m is less than the child Tenants of namespace "+p+" hold of cpu: 800m (a: 600m, b: 200m)")
	refused(t, "limiting what children do not", f.updateIn(grand, "p", `{resourceQuotas: {cpu: 1, count/pods: 5, memory: 1Gi}, childTenants: 3}`),
		"spec.resourceQuotas[memory]", "the child Tenants "+p+"/a, "+p+"/b set no limit for memory")
	if err := f.updateIn(grand, "p", `{resourceQuotas: {cpu: 2, count/pods: 6}, childTenants: 3}`); err != nil {
		t.Errorf("raising the parent: %v", err)
	}
	// ... which helm-controller renders into tenant-quota.
	rq := &corev1.ResourceQuota{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: p, Name: quotatree.TenantQuotaName}, rq); err != nil {
		t.Fatal(err)
	}
	rq.Spec.Hard = quantities("cpu", "2", "count/pods", "6")
	if err := f.c.Update(context.Background(), rq); err != nil {
		t.Fatal(err)
	}

	// childTenants: 3 bounds the children of p (a, b, then c).
	if err := f.createIn(p, "c", `{resourceQuotas: {cpu: 100m, count/pods: 1}}`); err != nil {
		t.Fatalf("the third child: %v", err)
	}
	refused(t, "a fourth child over childTenants: 3", f.createIn(p, "d", `{resourceQuotas: {cpu: 0, count/pods: 0}}`),
		"metadata.namespace", "namespace "+p+" already holds 3 child Tenants, its limit (spec.childTenants of Tenant "+grand+"/p)",
		"may raise spec.childTenants of Tenant "+grand+"/p")

	// A tenant without childTenants holds at most the default, 10.
	if err := f.createIn(grand, "q", `{}`); err != nil {
		t.Fatal(err)
	}
	q := f.tenantNamespace(grand, "q", "q."+host, nil)
	for i := range 10 {
		if err := f.createIn(q, fmt.Sprintf("c%d", i), `{}`); err != nil {
			t.Fatalf("child %d of 10: %v", i, err)
		}
	}
	refused(t, "an 11th child under the default", f.createIn(q, "c10", `{}`), "metadata.namespace", "already holds 10 child Tenants, its limit (spec.childTenants of Tenant "+grand+"/q, unset: its default 10)")

	// A namespace no Tenant renders (tenant-root) takes the server's
	// limit (--root-child-tenants).
	f.rest.strategy.rootChildTenants = 3 // grand holds p and q
	if err := f.createIn(grand, "r", `{}`); err != nil {
		t.Fatal(err)
	}
	refused(t, "over --root-child-tenants", f.createIn(grand, "s", `{}`), "metadata.namespace", "already holds 3 child Tenants", "--root-child-tenants")
}

func waitQuotaStatus(t *testing.T, c client.Client, ns, name string, ok func(*corev1.ResourceQuota) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rq := &corev1.ResourceQuota{}
		err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rq)
		if err == nil && ok(rq) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ResourceQuota %s/%s: %v, status %+v", ns, name, err, rq.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createPod creates a Pod requesting cpu in ns, retrying while the
// namespace's default ServiceAccount is not made yet. No kubelet runs it:
// admission, quota included, is all that matters.
func createPod(t *testing.T, c client.Client, ns, name, cpu string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Create(context.Background(), pod(ns, name, cpu))
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "serviceaccount") {
			t.Fatalf("pod %s/%s: %v", ns, name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func pod(ns, name, cpu string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{
		AutomountServiceAccountToken: new(false),
		Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		}}},
	}}
}

// Creates racing in one namespace do not pass childTenants together: one
// cozystack-api serializes the Tenant writes of a namespace.
func TestChildTenantsUnderRacingCreates(t *testing.T) {
	f := tenantFixture(t)
	if err := f.createIn(f.ns, "p", `{childTenants: 3}`); err != nil {
		t.Fatal(err)
	}
	p := f.tenantNamespace(f.ns, "p", "", nil)
	errs := make(chan error, 12)
	for i := range 12 {
		go func() { errs <- f.createIn(p, fmt.Sprintf("r%d", i), `{}`) }()
	}
	created := 0
	for range 12 {
		if err := <-errs; err == nil {
			created++
		} else if !strings.Contains(err.Error(), "already holds 3 child Tenants") {
			t.Errorf("unexpected refusal: %v", err)
		}
	}
	if created != 3 {
		t.Errorf("%d of 12 racing creates passed childTenants: 3", created)
	}
}
