package charts_test

import (
	"strings"
	"testing"

	"cozystack.io/sdk/charttest"
)

// TestTenantPodSecurity: the Tenant chart labels the tenant namespace with
// Pod Security enforce, warn and audit: restricted by default, the cluster
// operator's _cluster.tenant-pod-security when set (contract K2), and a
// value outside the three levels fails the render naming the key.
func TestTenantPodSecurity(t *testing.T) {
	for _, tc := range []struct {
		name, level, want, err string
	}{
		{name: "default", want: "restricted"},
		{name: "raised-by-operator", level: "baseline", want: "baseline"},
		{name: "privileged", level: "privileged", want: "privileged"},
		{name: "unknown", level: "none", err: "_cluster.tenant-pod-security"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := charttest.Load("tenant")
			if err != nil {
				t.Fatal(err)
			}
			v := charttest.WithK2(nil)
			if tc.level != "" {
				v["_cluster"].(map[string]any)["tenant-pod-security"] = tc.level
			}
			out, err := charttest.Render(c, "tenant-acme", v)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("render error %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			objs, err := charttest.Objects(out)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, o := range objs {
				if o.GetKind() != "Namespace" {
					continue
				}
				found = true
				l := o.GetLabels()
				for _, mode := range []string{"enforce", "warn", "audit"} {
					if got := l["pod-security.kubernetes.io/"+mode]; got != tc.want {
						t.Errorf("label pod-security.kubernetes.io/%s = %q, want %q", mode, got, tc.want)
					}
					if got := l["pod-security.kubernetes.io/"+mode+"-version"]; got != "latest" {
						t.Errorf("label pod-security.kubernetes.io/%s-version = %q, want latest", mode, got)
					}
				}
			}
			if !found {
				t.Fatal("the Tenant chart rendered no Namespace")
			}
		})
	}
}
