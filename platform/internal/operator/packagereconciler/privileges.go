package packagereconciler

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/status"
)

// Consent is specific (docs/operator/catalogs.md, "Catalog delivery", "What a third-party
// catalog gets"): spec.allowPrivileged consents to
// the privileged rights a Package is granted when it first installs; a
// later revision that asks for a right not granted yet stops with
// PrivilegeChangeRequiresApproval, listing the new rights and the digest
// to approve, and keeps the installed revision until the cluster operator
// writes that digest into spec.approvedPrivileges. What was granted is
// recorded in status.grantedPrivileges.

// requested returns what v's enabled privileged components ask for, by
// name.
func requested(v *view) []v1alpha1.PrivilegedComponent {
	out := []v1alpha1.PrivilegedComponent{}
	for _, c := range v.enabled {
		if c.Privileged {
			out = append(out, v1alpha1.PrivilegedComponent{Name: c.Name, Namespace: c.Namespace, Rules: c.Rules, ClusterRules: c.ClusterRules,
				ConversionWebhooks: c.ConversionWebhooks})
		}
	}
	slices.SortFunc(out, func(a, b v1alpha1.PrivilegedComponent) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// rights expands rules into one string per right they grant:
// "<scope> <group>/<resource>[<names>]: <verb>" or "<scope> <url>: <verb>".
func rights(scope string, rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		names := ""
		if len(r.ResourceNames) > 0 {
			names = "[" + strings.Join(r.ResourceNames, ",") + "]"
		}
		for _, v := range r.Verbs {
			for _, u := range r.NonResourceURLs {
				out = append(out, fmt.Sprintf("%s %s: %s", scope, u, v))
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					group := g
					if group == "" {
						group = "core"
					}
					out = append(out, fmt.Sprintf("%s %s/%s%s: %s", scope, group, res, names, v))
				}
			}
		}
	}
	return out
}

// componentRights is every right of c, its namespaced ones scoped to its
// namespace.
func componentRights(c v1alpha1.PrivilegedComponent) []string {
	out := append(rights("in namespace "+c.Namespace+",", c.Rules), rights("cluster-wide,", c.ClusterRules)...)
	// A conversion webhook reads every object of its kind: a right like
	// any other (crdpolicy.go).
	for _, w := range c.ConversionWebhooks {
		out = append(out, "cluster-wide conversion webhook of CustomResourceDefinition "+w)
	}
	return out
}

// newRights returns, per component of want, the rights granted does not
// hold ("component <c>: <right>, ..."), sorted by component.
func newRights(want []v1alpha1.PrivilegedComponent, granted *v1alpha1.GrantedPrivileges) []string {
	had := map[string]map[string]bool{}
	for _, c := range granted.Components {
		had[c.Name] = map[string]bool{}
		for _, r := range componentRights(c) {
			had[c.Name][r] = true
		}
	}
	var out []string
	for _, c := range want {
		var extra []string
		for _, r := range componentRights(c) {
			if !had[c.Name][r] && !slices.Contains(extra, r) {
				extra = append(extra, r)
			}
		}
		if len(extra) > 0 {
			out = append(out, fmt.Sprintf("component %s: %s", c.Name, strings.Join(extra, "; ")))
		}
	}
	return out
}

// describeRequest lists what components ask for, for PrivilegeNotAllowed.
func describeRequest(want []v1alpha1.PrivilegedComponent) string {
	var out []string
	for _, c := range want {
		out = append(out, fmt.Sprintf("component %s: %s", c.Name, strings.Join(componentRights(c), "; ")))
	}
	return strings.Join(out, " | ")
}

// privileges decides whether v's Package may have what its enabled
// privileged components ask for. It returns the grant to record once the
// Package installs, or the result to report instead (nothing is installed
// or upgraded then). allowPrivileged is checked before (newView).
func privileges(v *view) (*v1alpha1.GrantedPrivileges, *status.Result) {
	p := v.pkg
	want := requested(v)
	grant := &v1alpha1.GrantedPrivileges{Digest: v1alpha1.PrivilegesDigest(want), Components: want}
	granted := p.Status.GrantedPrivileges
	switch {
	case granted == nil, granted.Digest == grant.Digest, p.Spec.ApprovedPrivileges == grant.Digest:
		return grant, nil
	}
	extra := newRights(want, granted)
	if len(extra) == 0 {
		return grant, nil // less than granted: no consent needed
	}
	return nil, &status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonPrivilegeChangeRequiresApproval, Message: fmt.Sprintf(
		"catalog %s %s asks for privileged rights this Package was not granted: %s. To grant them, set spec.approvedPrivileges: %q; the installed revision is kept (its HelmReleases suspended) and no right is widened until then",
		v.catalog(), v.source.Status.Catalog.Version, strings.Join(extra, " | "), grant.Digest)}
}
