package application

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The API server's forbidden, as helm-controller v1.4 reports a failed
// install in Ready, becomes reason Forbidden naming the object, the
// installer, why and who must act (docs/operator/tenants.md, "Tenants: who may do what"; K5 k5-cozy-lib.md, "The identities releases install as").
func TestForbiddenCondition(t *testing.T) {
	const install = `Helm install failed for release tenant-a/esc with chart escalator@0.1.0: `
	for _, tc := range []struct {
		name    string
		reason  string
		message string
		status  metav1.ConditionStatus
		want    []string // nil for no Forbidden
	}{
		{
			name:    "cluster-scoped object",
			reason:  "a cluster-scoped object is forbidden to the tenant's installer, and the condition says a chart may not create one",
			message: install + `Unable to continue with install: could not get information about the resource ClusterRole "grab" in namespace "": clusterroles.rbac.authorization.k8s.io "grab" is forbidden: User "system:serviceaccount:tenant-a:cozy-installer" cannot get resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`,
			status:  metav1.ConditionFalse,
			want:    []string{`the chart renders clusterroles.rbac.authorization.k8s.io "grab" (cluster-scoped)`, "installer system:serviceaccount:tenant-a:cozy-installer may not get", "may not create cluster-scoped objects", "catalog's author"},
		},
		{
			name:    "another namespace",
			reason:  "an object in another namespace is forbidden: the installer writes only its own namespace",
			message: install + `configmaps "x" is forbidden: User "system:serviceaccount:tenant-a:cozy-installer" cannot create resource "configmaps" in API group "" in the namespace "kube-system"`,
			status:  metav1.ConditionFalse,
			want:    []string{`configmaps "x" (in namespace kube-system)`, "only in its own namespace tenant-a"},
		},
		{
			name:    "an undeclared kind",
			reason:  "a kind the catalog does not declare is named with where to declare it (applications[].rules)",
			message: install + `leases.coordination.k8s.io "l" is forbidden: User "system:serviceaccount:tenant-a:cozy-installer" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "tenant-a"`,
			status:  metav1.ConditionFalse,
			want:    []string{"the application's catalog does not declare resource leases in API group coordination.k8s.io", "applications[].rules"},
		},
		// Helm's readiness wait lists a Deployment's ReplicaSets, which
		// the chart does not render: the refusal names no object.
		{
			name:    "a list of what Helm waits on",
			reason:  "a list Helm makes while it waits is refused as a missing rule, and the condition gives the rule to add",
			message: install + `replicasets.apps is forbidden: User "system:serviceaccount:tenant-a:cozy-installer" cannot list resource "replicasets" in API group "apps" in the namespace "tenant-a"`,
			status:  metav1.ConditionFalse,
			want: []string{"may not list replicasets.apps (in namespace tenant-a)", "does not declare resource replicasets in API group apps",
				"the rule to add is {apiGroups: [apps], resources: [replicasets], verbs: [get, list, watch]}"},
		},
		{
			name:    "a list of Pods in the core group",
			reason:  "in the core group the rule to add names the group as \"\"",
			message: install + `pods is forbidden: User "system:serviceaccount:tenant-a:cozy-installer" cannot list resource "pods" in API group "" in the namespace "tenant-a"`,
			status:  metav1.ConditionFalse,
			want:    []string{"may not list pods (in namespace tenant-a)", `{apiGroups: [""], resources: [pods], verbs: [get, list, watch]}`},
		},
		{
			name:    "another failure",
			reason:  "another install failure is no Forbidden",
			message: "Helm install failed: timed out",
			status:  metav1.ConditionFalse,
			want:    nil,
		},
		{
			name:    "ready",
			reason:  "a ready release has no Forbidden",
			message: "Helm install succeeded",
			status:  metav1.ConditionTrue,
			want:    nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tc.name, tc.reason)
				}
			})
			ready := &metav1.Condition{Type: "Ready", Status: tc.status, Reason: "InstallFailed", Message: tc.message}
			got := forbiddenCondition(ready, "tenant-a")
			if tc.want == nil {
				if got != nil {
					t.Fatalf("Forbidden for %q: %+v", tc.message, got)
				}
				return
			}
			if got == nil || got.Reason != ReasonForbidden || got.Status != metav1.ConditionFalse {
				t.Fatalf("condition = %+v, want False Forbidden", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q lacks %q", got.Message, w)
				}
			}
		})
	}
}
