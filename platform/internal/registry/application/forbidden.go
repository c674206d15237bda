package application

import (
	"fmt"
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReasonForbidden is the reason of an application's Ready condition when
// its release failed because the chart renders an object its installer may
// not touch: application releases install as their catalog's installer
// ServiceAccount in the tenant namespace, which holds only what that
// catalog declares for its applications, in that namespace (contract K5,
// k5-cozy-lib.md, "Tenant roles").
const ReasonForbidden = "Forbidden"

// The API server's refusal (k8s.io/apiserver pkg/endpoints/handlers/
// responsewriters.forbiddenMessage, apierrors.NewForbidden), as Helm
// passes it on: `<resource>[.<group>] ["<name>" ]is forbidden: User
// "<user>" cannot <verb> resource "<resource>" in API group "<group>" (at
// the cluster scope | in the namespace "<ns>")`. A list or watch names no
// object: Helm's readiness wait lists a Deployment's ReplicaSets and a
// ReplicaSet's Pods (helm.sh/helm/v3 pkg/kube ready.go), so "replicasets.apps
// is forbidden: ... cannot list resource "replicasets"" fails an install
// whose chart renders only a Deployment.
var apiForbidden = regexp.MustCompile(`(\S+) (?:"([^"]*)" )?is forbidden: User "([^"]*)" cannot (\S+) resource "([^"]*)" in API group "([^"]*)" (?:at the cluster scope|in the namespace "([^"]*)")`)

// forbiddenCondition returns the Ready condition of an application whose
// release failed with forbidden: reason Forbidden, a message naming the
// object, what was refused, why, and who must act. It returns nil when
// ready is not such a failure.
func forbiddenCondition(ready *metav1.Condition, releaseNamespace string) *metav1.Condition {
	if ready == nil || ready.Status != metav1.ConditionFalse {
		return nil
	}
	m := apiForbidden.FindStringSubmatch(ready.Message)
	if m == nil {
		return nil
	}
	object, name, user, verb, resource, group, ns := m[1], m[2], m[3], m[4], m[5], m[6], m[7]
	var where, why string
	switch {
	case ns == "":
		where = "cluster-scoped"
		why = "an application chart may not create cluster-scoped objects: the chart must not render it (its catalog's author must fix the chart)"
	case ns != releaseNamespace:
		where = "in namespace " + ns
		why = "an application chart may create objects only in its own namespace " + releaseNamespace + ": the chart must not render it there (its catalog's author must fix the chart)"
	default:
		where = "in namespace " + ns
		groupName := group
		if groupName == "" {
			groupName = `"" (core)`
		}
		why = fmt.Sprintf("the application's catalog does not declare resource %s in API group %s for its applications (applications[].rules in catalog.yaml), and an application holds only its own catalog's rights: the catalog's author must declare it (or, when the catalog does and was installed only now, wait for its PackageSource to be Ready)", resource, groupName)
	}
	c := *ready
	c.Reason = ReasonForbidden
	if name == "" && ns == releaseNamespace {
		// Helm listed objects it did not render (its readiness wait): the
		// rule to add is a read of that resource.
		c.Message = fmt.Sprintf("Helm, waiting for the chart's objects to be ready, may not %s %s (%s) as the application's installer %s: %s; the rule to add is %s (helm-controller: %s)",
			verb, object, where, user, why, readRule(group, resource), ready.Message)
		return &c
	}
	c.Message = fmt.Sprintf("the chart renders %s %q (%s), which the application's installer %s may not %s: %s (helm-controller: %s)",
		object, name, where, user, verb, why, ready.Message)
	return &c
}

// readRule prints the applications[].rules entry that grants Helm's reads
// of group/resource, as catalog.yaml holds it (the form
// K4-application-rights suggests, contracts/schemas/v1alpha1/k4-values.md).
func readRule(group, resource string) string {
	if group == "" {
		group = `""`
	}
	return fmt.Sprintf("{apiGroups: [%s], resources: [%s], verbs: [get, list, watch]}", group, resource)
}
