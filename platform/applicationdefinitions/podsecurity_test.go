package applicationdefinitions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// TestTenantNamespacePodSecurity: a Tenant's namespace,
// as the Tenant chart renders it through helm-controller, carries Pod
// Security enforce, warn and audit "restricted", so the API server's own
// Pod Security admission refuses a privileged pod there, even the
// admin's; a Tenant cannot lower it through its values; only the cluster
// operator raises it, through ClusterValues .spec.podSecurity.tenantLevel
// (K2 _cluster.tenant-pod-security).
func TestTenantNamespacePodSecurity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, dyn := setupPlatform(t, ctx)
	create := createTenant(ctx, dyn)
	// A tenant admin's try to set the cluster value through the Tenant's
	// spec: the application API keeps only the Tenant's own keys.
	err := create("tenant-root", "pss", map[string]any{"_cluster": map[string]any{"tenant-pod-security": "privileged"}})
	if err != nil && !strings.Contains(err.Error(), "_cluster") {
		t.Fatalf("Tenant with _cluster in its spec: %v", err)
	}
	if err != nil {
		if err := create("tenant-root", "pss", map[string]any{}); err != nil {
			t.Fatal(err)
		}
	}
	level := func(want string) {
		t.Helper()
		eventually(t, ctx, "namespace tenant-pss at Pod Security "+want, func() error {
			ns := &corev1.Namespace{}
			if err := c.Get(ctx, client.ObjectKey{Name: "tenant-pss"}, ns); err != nil {
				return err
			}
			for _, mode := range []string{"enforce", "warn", "audit"} {
				if got := ns.Labels["pod-security.kubernetes.io/"+mode]; got != want {
					return fmt.Errorf("label pod-security.kubernetes.io/%s = %q", mode, got)
				}
			}
			return nil
		})
	}
	level("restricted")
	privileged := func() error {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "tenant-pss"}, Spec: corev1.PodSpec{
			HostPID: true,
			Containers: []corev1.Container{{Name: "x", Image: "registry.example/x:1",
				SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}},
		}}
		return c.Create(ctx, pod, client.DryRunAll)
	}
	if err := privileged(); err == nil || !strings.Contains(err.Error(), `violates PodSecurity "restricted:latest"`) {
		t.Fatalf("a privileged hostPID pod in a tenant namespace: %v; want Pod Security's refusal", err)
	}

	// The cluster operator raises it; the release re-renders on the
	// projected values.
	setLevel := func(ctx context.Context, l string) {
		t.Helper()
		// cozystack-controller writes the object's status meanwhile.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cv := &v1alpha1.ClusterValues{}
			if err := c.Get(ctx, client.ObjectKey{Name: v1alpha1.ClusterValuesName}, cv); err != nil {
				return err
			}
			cv.Spec.PodSecurity.TenantLevel = l
			return c.Update(ctx, cv)
		}); err != nil {
			t.Fatal(err)
		}
	}
	setLevel(ctx, "privileged")
	t.Cleanup(func() { setLevel(context.Background(), "") })
	level("privileged")
	if err := privileged(); err != nil {
		t.Errorf("at the operator's level privileged, the pod is still refused: %v", err)
	}
}
