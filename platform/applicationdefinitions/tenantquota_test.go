package applicationdefinitions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestTenantQuotaTree is the quota tree end to end (contract K2, Tenant
// quotas) with the real chart, helm-controller and cozystack-controller:
// a Tenant capped at cpu: 1, count/pods: 5 gets its tenant-quota; a child
// asking for cpu: 100k, or for no quota, is refused; a child within the
// limits is accepted and the parent's namespace gets tenant-subtree =
// limit - child; childTenants: 2 bounds the children. And the hosts:
// a child given its parent's host is refused, as is a
// second tenant deriving the same host.
func TestTenantQuotaTree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	create := createTenant(ctx, dyn)
	if err := create("tenant-root", "capped", map[string]any{"resourceQuotas": map[string]any{"cpu": 1, "count/pods": 5}, "childTenants": 2}); err != nil {
		t.Fatal(err)
	}
	waitProjected(t, ctx, c, "tenant-capped", "capped", map[string]any{"host": "capped.example.org", "monitoring": "tenant-root"})
	eventually(t, ctx, "tenant-quota rendered", func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: "tenant-capped", Name: "tenant-quota"}, &corev1.ResourceQuota{})
	})

	for _, tc := range []struct {
		name  string
		spec  map[string]any
		field string
		says  string
	}{
		{"big", map[string]any{"resourceQuotas": map[string]any{"cpu": "100k", "count/pods": 1}}, "spec.resourceQuotas[cpu]", "100k exceeds what the parent has left"},
		{"none", map[string]any{}, "spec.resourceQuotas[count/pods]", "must limit every resource its parent limits"},
		{"same", map[string]any{"host": "capped.example.org", "resourceQuotas": map[string]any{"cpu": 0, "count/pods": 0}}, "spec.host", "is the host of the parent tenant namespace tenant-capped"},
	} {
		err := create("tenant-capped", tc.name, tc.spec)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Tenant %s: err = %v, want 422 on %s saying %q", tc.name, err, tc.field, tc.says)
		}
	}
	if err := create("tenant-capped", "kid", map[string]any{"resourceQuotas": map[string]any{"cpu": "500m", "count/pods": 3}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "tenant-subtree of tenant-capped", func() error {
		rq := &corev1.ResourceQuota{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant-capped", Name: "tenant-subtree"}, rq); err != nil {
			return err
		}
		pods, cpu := rq.Spec.Hard["count/pods"], rq.Spec.Hard[corev1.ResourceCPU]
		if pods.Cmp(resource.MustParse("2")) != 0 || cpu.Cmp(resource.MustParse("500m")) != 0 {
			return fmt.Errorf("hard %v, want count/pods 2, cpu 500m", rq.Spec.Hard)
		}
		return nil
	})
	// A host derived twice: kid.capped.example.org is kid's; a Tenant
	// setting it explicitly elsewhere in the subtree is refused.
	if err := create("tenant-capped", "other", map[string]any{"host": "kid.capped.example.org", "resourceQuotas": map[string]any{"cpu": 0, "count/pods": 0}}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "kid.capped.example.org is already the host of Tenant tenant-capped/kid") {
		t.Errorf("a second tenant with kid's derived host: err = %v", err)
	}
	if err := create("tenant-capped", "kid2", map[string]any{"resourceQuotas": map[string]any{"cpu": 0, "count/pods": 0}}); err != nil {
		t.Fatal(err)
	}
	err := create("tenant-capped", "kid3", map[string]any{"resourceQuotas": map[string]any{"cpu": 0, "count/pods": 0}})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "already holds 2 child Tenants, its limit (spec.childTenants of Tenant tenant-root/capped)") {
		t.Errorf("a third child under childTenants: 2: err = %v", err)
	}
}
