package tenantquota_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/controller"
	"cozystack.io/platform/internal/controller/tenantquota"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/quotatree"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

// startController runs cozystack-controller with only this package's
// controller until the end of the test.
func startController(t *testing.T) {
	t.Helper()
	o := controller.NewOptions()
	o.Controllers = []string{controller.ControllerTenantQuota}
	o.LeaderElect = false
	o.InstallCRDs = true
	o.MetricsBindAddress = "0"
	o.HealthProbeBindAddress = "0"
	o.SkipNameValidation = true
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := controller.NewManager(ctx, env.Config, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tenantRelease is the HelmRelease of Tenant name in ns with limits, as
// cozystack-api writes it (no helm-controller runs here).
func tenantRelease(ns, name string, limits map[string]any) *helmv2.HelmRelease {
	raw, _ := json.Marshal(map[string]any{quotatree.ValuesKey: limits})
	return &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-" + name, Labels: map[string]string{
			v1alpha1.LabelApplicationKind: quotatree.TenantKind, v1alpha1.LabelApplicationName: name,
		}},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour},
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "ExternalArtifact", Name: "tenant", Namespace: v1alpha1.SystemNamespace},
			Values:   &apiextensionsv1.JSON{Raw: raw},
		},
	}
}

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{
		AutomountServiceAccountToken: new(false),
		Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		}}},
	}}
}

// createPod creates a pod, retrying while the namespace's default
// ServiceAccount or its quotas' status are not there yet; it returns the
// quota admission's refusal.
func createPod(t *testing.T, c client.Client, ns, name string) error {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Create(context.Background(), pod(ns, name))
		if err == nil || time.Now().After(deadline) ||
			!strings.Contains(err.Error(), "serviceaccount") && !strings.Contains(err.Error(), "status unknown for quota") {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The attack on count/...: a parent capped at count/pods: 5 gave
// a child 3 and kept all 5 for itself. The ResourceQuota tenant-subtree
// (contract K2, Tenant quotas) holds the parent's namespace to its limit
// minus its children's, and kube-apiserver's quota admission refuses the
// 3rd pod there: the subtree holds at most 5.
func TestSubtreeQuota(t *testing.T) {
	testenv.Need(t, env)
	ctx := context.Background()
	c, err := client.New(env.Config, client.Options{Scheme: controllermanager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	startController(t)

	parent := "tq-" + rand.String(6)
	child := parent + "-c"
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: parent, Labels: map[string]string{v1alpha1.LabelTenant: "p"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: child, Labels: map[string]string{v1alpha1.LabelTenant: "c", v1alpha1.LabelParent: parent}}},
	} {
		if err := c.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	}
	// What the tenant chart renders: each namespace's tenant-quota.
	for ns, pods := range map[string]string{parent: "5", child: "3"} {
		rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: quotatree.TenantQuotaName},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/pods": resource.MustParse(pods), corev1.ResourceCPU: resource.MustParse("1")}}}
		if err := c.Create(ctx, rq); err != nil {
			t.Fatal(err)
		}
	}
	hr := tenantRelease(parent, "c", map[string]any{"count/pods": 3, "cpu": "1"})
	if err := c.Create(ctx, hr); err != nil {
		t.Fatal(err)
	}

	hardIs := func(want map[string]string) func() error {
		return func() error {
			rq := &corev1.ResourceQuota{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: parent, Name: quotatree.SubtreeQuotaName}, rq); err != nil {
				return err
			}
			if rq.Labels[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByController {
				return fmt.Errorf("labels %v", rq.Labels)
			}
			if len(rq.Spec.Hard) != len(want) {
				return fmt.Errorf("hard %v, want %v", rq.Spec.Hard, want)
			}
			for name, q := range want {
				got := rq.Spec.Hard[corev1.ResourceName(name)]
				if got.Cmp(resource.MustParse(q)) != 0 {
					return fmt.Errorf("hard %v, want %v", rq.Spec.Hard, want)
				}
			}
			return nil
		}
	}
	eventually(t, "tenant-subtree = limit - children", hardIs(map[string]string{"count/pods": "2", "cpu": "0"}))

	// Own use: cpu is all given away, so a pod of the parent is refused;
	// with the child at cpu 500m two pods fit, the third does not.
	hr.Spec.Values = tenantRelease(parent, "c", map[string]any{"count/pods": 3, "cpu": "500m"}).Spec.Values
	if err := c.Update(ctx, hr); err != nil {
		t.Fatal(err)
	}
	eventually(t, "tenant-subtree follows the child", hardIs(map[string]string{"count/pods": "2", "cpu": "500m"}))
	eventually(t, "tenant-subtree status", func() error {
		rq := &corev1.ResourceQuota{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: parent, Name: quotatree.SubtreeQuotaName}, rq); err != nil {
			return err
		}
		if q := rq.Status.Hard["count/pods"]; q.Cmp(resource.MustParse("2")) != 0 {
			return fmt.Errorf("status %+v", rq.Status)
		}
		return nil
	})
	for _, name := range []string{"p1", "p2"} {
		if err := createPod(t, c, parent, name); err != nil {
			t.Fatalf("pod %s of the parent: %v", name, err)
		}
	}
	err = createPod(t, c, parent, "p3")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: "+quotatree.SubtreeQuotaName) {
		t.Errorf("3rd pod of a parent capped at 5 that gave 3 to a child: err = %v, want Forbidden by quota %s", err, quotatree.SubtreeQuotaName)
	}
	for _, name := range []string{"c1", "c2", "c3"} {
		if err := createPod(t, c, child, name); err != nil {
			t.Fatalf("pod %s of the child: %v", name, err)
		}
	}
	if err := createPod(t, c, child, "c4"); !apierrors.IsForbidden(err) {
		t.Errorf("4th pod of the child capped at 3: err = %v, want Forbidden", err)
	}

	// Children holding more than the limit (a release written around
	// cozystack-api): the parent gets 0 and a Warning naming them.
	hr.Spec.Values = tenantRelease(parent, "c", map[string]any{"count/pods": 6, "cpu": "500m"}).Spec.Values
	if err := c.Update(ctx, hr); err != nil {
		t.Fatal(err)
	}
	eventually(t, "tenant-subtree at 0", hardIs(map[string]string{"count/pods": "0", "cpu": "500m"}))
	eventually(t, "Warning "+tenantquota.ReasonChildrenExceedLimit, func() error {
		var evs eventsv1.EventList
		if err := c.List(ctx, &evs, client.InNamespace(parent)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == tenantquota.ReasonChildrenExceedLimit && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Note, "count/pods: they hold 6 (c: 6), the limit is 5") && strings.Contains(e.Note, quotatree.Rule) {
				return nil
			}
		}
		return fmt.Errorf("no such event among %d", len(evs.Items))
	})

	// The child goes: the parent has its whole limit; no limit: no quota.
	if err := c.Delete(ctx, hr); err != nil {
		t.Fatal(err)
	}
	eventually(t, "tenant-subtree without children", hardIs(map[string]string{"count/pods": "5", "cpu": "1"}))
	if err := c.Delete(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: parent, Name: quotatree.TenantQuotaName}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "tenant-subtree deleted", func() error {
		err := c.Get(ctx, client.ObjectKey{Namespace: parent, Name: quotatree.SubtreeQuotaName}, &corev1.ResourceQuota{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
}
