package artifact

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// The rules a catalog declares for its applications (README.md,
// "Application rights"; contract K5, k5-cozy-lib.md, "Tenant roles") are
// granted in every tenant namespace: applications[].rules to the
// installer ServiceAccount every application release installs as,
// applications[].tenantRoles to the tenant's users. Neither may reach the
// platform, Flux, RBAC, the tenant's quota or another identity's rights,
// whatever the catalog asks for: these checks run at build, at pull and
// in the operator.

// allowedVerbs are the verbs a declared rule may hold: no wildcards, and
// none of the verbs that act on rights (escalate, bind, impersonate) or
// other API machinery (approve, sign, use).
var allowedVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// builtinGroups are the Kubernetes API groups an application's objects
// live in; every other group named k8s.io or *.k8s.io (RBAC, admission,
// CRDs, certificates, storage, scheduling, ...) is refused.
var builtinGroups = []string{"", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "discovery.k8s.io", "events.k8s.io"}

// fluxOperatorGroup is the Flux Operator's API group (FluxInstance,
// ResourceSet): a ResourceSet reconciles the objects it templates with the
// operator's own identity unless it names another, so it is Flux's as much
// as fluxcd.io.
const fluxOperatorGroup = "fluxcd.controlplane.io"

// installerCoreResources are the core resources an application chart may
// hold; Namespaces, ResourceQuotas, LimitRanges, token and exec
// subresources and cluster-scoped resources are not among them.
var installerCoreResources = []string{"configmaps", "secrets", "services", "endpoints", "persistentvolumeclaims", "serviceaccounts", "pods", "events"}

// tenantCoreResources are the core resources a catalog may grant tenant
// users rights on; Secrets and ServiceAccounts are the platform's to
// grant (its base roles), so Helm's release storage and the installer's
// identity stay out of a catalog's reach. ConfigMaps are left out too:
// every tenant namespace holds the projected cluster values (K2,
// cozystack-values), which a tenant user able to write ConfigMaps could
// rewrite for every release of the namespace. So are Endpoints: writing
// them points a Service at any address of the cluster, another tenant's
// Pods included (CVE-2021-25740; Kubernetes' own edit role dropped them).
// tenantBuiltinVerbs are the verbs a catalog may grant tenant users on
// resources of Kubernetes' own groups (builtinGroups).
var tenantBuiltinVerbs = []string{"get", "list", "watch", "delete"}

var tenantCoreResources = []string{"services", "persistentvolumeclaims", "pods", "pods/log", "events"}

// tenantRefusedGroups are built-in groups a catalog may not grant tenant
// users rights in: EndpointSlices point a Service anywhere, as Endpoints
// do.
var tenantRefusedGroups = []string{"discovery.k8s.io"}

// CheckApplicationRules checks applications[].rules at path p: each is a
// valid namespaced rule (no non-resource URLs) with no wildcard, verbs
// among get, list, watch, create, update, patch, delete and
// deletecollection, and resources in a group an application's objects may
// live in: the core resources installerCoreResources, the groups apps,
// batch, autoscaling, policy, networking.k8s.io, discovery.k8s.io and
// events.k8s.io, or a group that is neither Kubernetes' (k8s.io), Flux's
// (fluxcd.io, fluxcd.controlplane.io) nor the platform's (cozystack.io),
// such as an operator's CRDs.
func CheckApplicationRules(p *field.Path, rules []rbacv1.PolicyRule) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		errs = append(errs, checkDeclaredRule(p.Index(i), r, installerCoreResources, false, nil)...)
	}
	return errs
}

// CheckComponentRules checks the rules of a component that is not
// privileged (variants[].components[].rules) as CheckApplicationRules does:
// no wildcards, no escalate, bind or impersonate, no RBAC objects, no
// Namespaces, quotas or tokens, no group of Flux or the platform. Such a
// component installs into a namespace of its own Package only, so the
// Secrets it may touch are its own. Anything else needs privileged: true,
// which a Package installs only with allowPrivileged.
func CheckComponentRules(p *field.Path, rules []rbacv1.PolicyRule) field.ErrorList {
	errs := CheckApplicationRules(p, rules)
	for _, e := range errs {
		e.Detail += "; a component that needs it must be privileged: true (a Package then installs it only with allowPrivileged)"
	}
	return errs
}

// CheckTenantRoleRules checks applications[].tenantRoles at path p as
// CheckApplicationRules does, with the core resources tenantCoreResources,
// without the groups tenantRefusedGroups, and rules on apps.cozystack.io
// naming only plurals (or their subresources) of the catalog's own
// ApplicationDefinitions. plurals nil
// (the definitions are not read yet) skips that last check; an empty map
// (no definitions) refuses every such rule.
func CheckTenantRoleRules(p *field.Path, roles *v1alpha1.TenantRoles, plurals map[string]bool) field.ErrorList {
	var errs field.ErrorList
	for _, level := range roles.Levels() {
		for i, r := range level.Rules {
			errs = append(errs, checkDeclaredRule(p.Child(levelField(level.Level)).Index(i), r, tenantCoreResources, true, plurals)...)
		}
	}
	return errs
}

// levelField is the catalog.yaml field of a tenant access level.
func levelField(level string) string {
	if level == v1alpha1.TenantLevelSuperAdmin {
		return "superAdmin"
	}
	return level
}

// checkDeclaredRule checks one rule. apps false (an application's rules)
// refuses apps.cozystack.io; true (tenant roles) refuses
// tenantRefusedGroups, and its apps.cozystack.io resources must be among
// own or their subresources, unless own is nil (not known yet).
func checkDeclaredRule(p *field.Path, r rbacv1.PolicyRule, core []string, apps bool, own map[string]bool) field.ErrorList {
	errs := validateRule(p, r, true)
	for _, v := range r.Verbs {
		if !slices.Contains(allowedVerbs, v) {
			errs = append(errs, field.NotSupported(p.Child("verbs"), v, allowedVerbs))
		}
	}
	if apps && slices.ContainsFunc(r.APIGroups, func(g string) bool { return slices.Contains(builtinGroups, g) }) {
		// Tenant users may read and delete what runs in their namespace,
		// never make it: a Pod or a workload they wrote could run as any
		// ServiceAccount of the namespace, with the rights an operator
		// gave it.
		for _, v := range r.Verbs {
			if slices.Contains(allowedVerbs, v) && !slices.Contains(tenantBuiltinVerbs, v) {
				errs = append(errs, field.Invalid(p.Child("verbs"), v, fmt.Sprintf("tenant users get only %s on Kubernetes' own resources: they create workloads through applications", strings.Join(tenantBuiltinVerbs, ", "))))
			}
		}
	}
	for _, res := range r.Resources {
		if res == "*" || strings.HasPrefix(res, "*/") {
			errs = append(errs, field.Invalid(p.Child("resources"), res, "name each resource: wildcards are refused in rules a catalog declares"))
		}
	}
	for _, g := range r.APIGroups {
		gp := p.Child("apiGroups")
		switch {
		case g == "*":
			errs = append(errs, field.Invalid(gp, g, "name each API group: wildcards are refused in rules a catalog declares"))
		case g == "":
			for _, res := range r.Resources {
				if res != "*" && !slices.Contains(core, res) {
					errs = append(errs, field.Invalid(p.Child("resources"), res, fmt.Sprintf("is not a core resource a catalog may declare here (%s); the platform grants the rest", strings.Join(core, ", "))))
				}
			}
		case g == ApplicationsGroup && apps:
			for _, res := range r.Resources {
				plural, _, _ := strings.Cut(res, "/")
				if own != nil && !own[plural] && res != "*" {
					errs = append(errs, field.Invalid(p.Child("resources"), res, fmt.Sprintf("is not a kind of this catalog (%s): a catalog grants rights only on its own kinds", strings.Join(sortedKeys(own), ", "))))
				}
			}
		case apps && slices.Contains(tenantRefusedGroups, g):
			errs = append(errs, field.Invalid(gp, g, "is refused in tenant roles: writing EndpointSlices points a Service at any address of the cluster, another tenant's Pods included (CVE-2021-25740); the platform's base roles let tenant users read them"))
		case slices.Contains(builtinGroups, g):
		case g == "k8s.io" || strings.HasSuffix(g, ".k8s.io"):
			errs = append(errs, field.Invalid(gp, g, fmt.Sprintf("is a Kubernetes API group a catalog may not grant rights in (RBAC, admission, CRDs, certificates, storage, ...); allowed built-in groups: core, %s", strings.Join(builtinGroups[1:], ", "))))
		case g == "fluxcd.io" || strings.HasSuffix(g, ".fluxcd.io") || g == fluxOperatorGroup || strings.HasSuffix(g, "."+fluxOperatorGroup):
			errs = append(errs, field.Invalid(gp, g, "is Flux's: HelmReleases and sources are the platform's, and no tenant or application chart may touch them"))
		case g == "cozystack.io" || strings.HasSuffix(g, ".cozystack.io"):
			errs = append(errs, field.Invalid(gp, g, "is the platform's: Packages, PackageSources, ClusterValues and ApplicationDefinitions are the cluster operator's, and applications are created through the application API, not by charts"))
		}
	}
	return errs
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
