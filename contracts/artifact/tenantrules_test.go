package artifact_test

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
)

// rightsError is one error a rights check must give: its field path
// (exactly) and a fragment of its message.
type rightsError struct{ path, msg string }

var helmVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

func rule(groups, resources []string, verbs ...string) rbacv1.PolicyRule {
	if len(verbs) == 0 {
		verbs = helmVerbs
	}
	return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs}
}

func g(groups ...string) []string { return groups }

// checkRightsErrors compares errs with want, in order.
// reason says why the case exists and is printed on failure.
func checkRightsErrors(t *testing.T, reason string, errs field.ErrorList, want []rightsError) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("%d errors, want %d (%s):\n%v", len(errs), len(want), reason, errs.ToAggregate())
	}
	for i, w := range want {
		if errs[i].Field != w.path || !strings.Contains(errs[i].Error(), w.msg) {
			t.Errorf("error %d = %q (at %s)\nwant at %s, containing %q (%s)", i, errs[i].Error(), errs[i].Field, w.path, w.msg, reason)
		}
	}
}

func TestCheckApplicationRules(t *testing.T) {
	p := field.NewPath("applications").Index(0).Child("rules")
	const at = "applications[0].rules[0]"
	notCore := "is not a core resource a catalog may declare here"
	kube := "is a Kubernetes API group a catalog may not grant rights in"
	for _, tc := range []struct {
		name   string
		reason string
		rule   rbacv1.PolicyRule
		want   []rightsError
	}{
		// Accepted: the namespaced kinds an application chart renders.
		{
			name:   "core ConfigMaps, Secrets, Services, PVCs, ServiceAccounts",
			reason: "the namespaced core kinds an application chart renders are granted to its service account",
			rule:   rule(g(""), g("configmaps", "secrets", "services", "persistentvolumeclaims", "serviceaccounts")),
			want:   nil,
		},
		{
			name:   "apps Deployments and StatefulSets",
			reason: "workloads in apps are an application's own kinds",
			rule:   rule(g("apps"), g("deployments", "statefulsets")),
			want:   nil,
		},
		{
			name:   "batch with deletecollection",
			reason: "deletecollection is an ordinary verb, not one on rights, so it is allowed",
			rule:   rule(g("batch"), g("jobs", "cronjobs"), "get", "delete", "deletecollection"),
			want:   nil,
		},
		{
			name:   "networking.k8s.io NetworkPolicies and Ingresses",
			reason: "NetworkPolicies and Ingresses are namespaced kinds an application renders",
			rule:   rule(g("networking.k8s.io"), g("networkpolicies", "ingresses")),
			want:   nil,
		},
		{
			name:   "an operator's CRD group",
			reason: "an operator's CRD group is not a Kubernetes group: its kinds may be granted",
			rule:   rule(g("postgresql.cnpg.io"), g("clusters", "databases")),
			want:   nil,
		},
		{
			name:   "a SIG group under x-k8s.io",
			reason: "x-k8s.io groups are SIG projects' CRDs, not Kubernetes' own API groups",
			rule:   rule(g("cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io"), g("clusters", "kubevirtclusters")),
			want:   nil,
		},

		// Wildcards.
		{
			name:   "wildcard verb",
			reason: "a wildcard verb would include escalate, bind and impersonate, so it is refused among named verbs",
			rule:   rule(g(""), g("configmaps"), "get", "*"),
			want:   []rightsError{{at + ".verbs", `Unsupported value: "*"`}},
		},
		{
			name:   "wildcard group",
			reason: "a wildcard group would reach the Kubernetes, Flux and platform groups",
			rule:   rule(g("*"), g("deployments")),
			want:   []rightsError{{at + ".apiGroups", "wildcards are refused"}},
		},
		{
			name:   "wildcard resource",
			reason: "a wildcard resource would reach every kind of the group",
			rule:   rule(g("apps"), g("*")),
			want:   []rightsError{{at + ".resources", "wildcards are refused"}},
		},
		{
			name:   "wildcard resource with a subresource",
			reason: "a wildcard with a subresource is still a wildcard over the group's kinds",
			rule:   rule(g("apps"), g("*/scale")),
			want:   []rightsError{{at + ".resources", "wildcards are refused"}},
		},
		{
			name:   "wildcard core resource",
			reason: "a wildcard core resource would reach Namespaces, Nodes and the rest of core",
			rule:   rule(g(""), g("*")),
			want:   []rightsError{{at + ".resources", "wildcards are refused"}},
		},

		// Verbs that act on rights or other API machinery.
		{
			name:   "escalate",
			reason: "escalate lets a subject grant rights it does not hold",
			rule:   rule(g("postgresql.cnpg.io"), g("clusters"), "escalate"),
			want:   []rightsError{{at + ".verbs", `Unsupported value: "escalate"`}},
		},
		{
			name:   "bind",
			reason: "bind lets a subject bind roles it does not hold",
			rule:   rule(g("postgresql.cnpg.io"), g("clusters"), "bind"),
			want:   []rightsError{{at + ".verbs", `Unsupported value: "bind"`}},
		},
		{
			name:   "impersonate",
			reason: "impersonate lets a subject act as another user or service account",
			rule:   rule(g(""), g("serviceaccounts"), "impersonate"),
			want:   []rightsError{{at + ".verbs", `Unsupported value: "impersonate"`}},
		},
		{
			name:   "empty verbs",
			reason: "a rule without verbs grants nothing and is a mistake: it is refused as Required",
			rule:   rbacv1.PolicyRule{APIGroups: g(""), Resources: g("configmaps")},
			want:   []rightsError{{at + ".verbs", "Required value"}},
		},

		// Groups no application reaches.
		{
			name:   "RBAC",
			reason: "an application granting RBAC could give itself any right",
			rule:   rule(g("rbac.authorization.k8s.io"), g("roles", "rolebindings")),
			want:   []rightsError{{at + ".apiGroups", kube}},
		},
		{
			name:   "CRDs",
			reason: "CRDs are cluster-wide: an application may not create or change them",
			rule:   rule(g("apiextensions.k8s.io"), g("customresourcedefinitions")),
			want:   []rightsError{{at + ".apiGroups", kube}},
		},
		{
			name:   "admission",
			reason: "admission policies govern every tenant: an application may not change them",
			rule:   rule(g("admissionregistration.k8s.io"), g("validatingadmissionpolicies")),
			want:   []rightsError{{at + ".apiGroups", kube}},
		},
		{
			name:   "storage",
			reason: "storage.k8s.io is Kubernetes' own group, even for a namespaced kind",
			rule:   rule(g("storage.k8s.io"), g("csistoragecapacities")),
			want:   []rightsError{{at + ".apiGroups", kube}},
		},
		{
			name:   "Flux's HelmReleases",
			reason: "HelmReleases are how the platform installs: an application may not make its own",
			rule:   rule(g("helm.toolkit.fluxcd.io"), g("helmreleases")),
			want:   []rightsError{{at + ".apiGroups", "is Flux's"}},
		},
		{
			name:   "Flux's sources",
			reason: "Flux sources decide what is installed: an application may not make its own",
			rule:   rule(g("source.toolkit.fluxcd.io"), g("ocirepositories")),
			want:   []rightsError{{at + ".apiGroups", "is Flux's"}},
		},
		{
			name:   "the Flux Operator's ResourceSets",
			reason: "the Flux Operator's ResourceSets install like HelmReleases and are refused the same",
			rule:   rule(g("fluxcd.controlplane.io"), g("resourcesets")),
			want:   []rightsError{{at + ".apiGroups", "is Flux's"}},
		},
		{
			name:   "the platform's group",
			reason: "cozystack.io is the platform's own group",
			rule:   rule(g("cozystack.io"), g("packages")),
			want:   []rightsError{{at + ".apiGroups", "is the platform's"}},
		},
		{
			name:   "a platform subgroup",
			reason: "a subgroup of cozystack.io is the platform's too, not only the exact group",
			rule:   rule(g("core.cozystack.io"), g("tenantnamespaces")),
			want:   []rightsError{{at + ".apiGroups", "is the platform's"}},
		},
		{
			name:   "application kinds",
			reason: "applications are created through the application API, not by another application's rights",
			rule:   rule(g("apps.cozystack.io"), g("postgreses")),
			want:   []rightsError{{at + ".apiGroups", "applications are created through the application API"}},
		},

		// Core resources that are not an application's.
		{
			name:   "Namespaces",
			reason: "a Namespace is cluster-scoped and the platform's to make",
			rule:   rule(g(""), g("namespaces")),
			want:   []rightsError{{at + ".resources", notCore}},
		},
		{
			name:   "ResourceQuotas",
			reason: "ResourceQuotas are how the platform bounds a tenant",
			rule:   rule(g(""), g("resourcequotas")),
			want:   []rightsError{{at + ".resources", notCore}},
		},
		{
			name:   "LimitRanges",
			reason: "LimitRanges are how the platform bounds a tenant's pods",
			rule:   rule(g(""), g("limitranges")),
			want:   []rightsError{{at + ".resources", notCore}},
		},
		{
			name:   "tokens",
			reason: "a token for any service account would let the application act as it",
			rule:   rule(g(""), g("serviceaccounts/token"), "get"),
			want:   []rightsError{{at + ".resources", notCore}},
		},
		{
			name:   "exec",
			reason: "exec into pods is a shell in another workload",
			rule:   rule(g(""), g("pods/exec"), "get"),
			want:   []rightsError{{at + ".resources", notCore}},
		},
		{
			name:   "Nodes",
			reason: "Nodes are cluster-scoped and shared by every tenant",
			rule:   rule(g(""), g("nodes")),
			want:   []rightsError{{at + ".resources", notCore}},
		},
		{
			name:   "a rule on two groups names core resources in both",
			reason: "the core-resource check names the resource a two-group rule would grant in core",
			rule:   rule(g("", "apps"), g("configmaps", "deployments")),
			want:   []rightsError{{at + ".resources", `"deployments": ` + notCore}},
		},

		// Non-resource URLs are not namespaced.
		{
			name:   "non-resource URLs",
			reason: "non-resource URLs are cluster-wide and cannot be granted in a namespace",
			rule:   rbacv1.PolicyRule{NonResourceURLs: g("/metrics"), Verbs: g("get")},
			want:   []rightsError{{at + ".nonResourceURLs", "namespaced rules cannot apply to non-resource URLs"}},
		},

		{
			name:   "every problem of a rule",
			reason: "every problem of one rule is reported, in verbs, resources, apiGroups order",
			rule:   rule(g("*", "rbac.authorization.k8s.io"), g("*"), "escalate"),
			want: []rightsError{
				{at + ".verbs", "escalate"}, {at + ".resources", "wildcards"}, {at + ".apiGroups", "wildcards"}, {at + ".apiGroups", kube}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRightsErrors(t, tc.reason, artifact.CheckApplicationRules(p, []rbacv1.PolicyRule{tc.rule}), tc.want)
		})
	}
}

func TestCheckTenantRoleRules(t *testing.T) {
	p := field.NewPath("applications").Index(0).Child("tenantRoles")
	own := map[string]bool{"echoes": true}
	notCore := "is not a core resource a catalog may declare here"
	notOwn := "is not a kind of this catalog (echoes)"
	view, admin := g("get", "list", "watch"), g("create", "update", "patch", "delete")
	for _, tc := range []struct {
		name   string
		reason string
		roles  v1alpha1.TenantRoles
		// plurals are the catalog's; nil means own.
		plurals map[string]bool
		want    []rightsError
	}{
		// Accepted: the convention (view reads the kind, admin changes it)
		// and what users of an application need.
		{
			name:   "view and admin on the catalog's own kind",
			reason: "the convention: view reads the catalog's own kind and admin changes it",
			roles: v1alpha1.TenantRoles{
				View:  []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes"), view...)},
				Admin: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes"), admin...)},
			},
			plurals: nil,
			want:    nil,
		},
		{
			name:    "a subresource of the catalog's own kind",
			reason:  "a subresource of the catalog's own kind counts as its own",
			roles:   v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes/status"), "get")}},
			plurals: nil,
			want:    nil,
		},
		{
			name:   "consoles in use",
			reason: "consoles of the catalog's VMs are what a user of the application needs",
			roles: v1alpha1.TenantRoles{Use: []rbacv1.PolicyRule{
				rule(g("subresources.kubevirt.io"), g("virtualmachineinstances/console", "virtualmachineinstances/vnc"), "get"),
				rule(g("subresources.kubevirt.io"), g("virtualmachineinstances/portforward"), "get", "update"),
			}},
			plurals: nil,
			want:    nil,
		},
		{
			name:    "an operator's kind in super-admin",
			reason:  "super-admin may reach an operator's kind the application runs",
			roles:   v1alpha1.TenantRoles{SuperAdmin: []rbacv1.PolicyRule{rule(g("postgresql.cnpg.io"), g("backups"), "create")}},
			plurals: nil,
			want:    nil,
		},
		{
			name:    "core Services, Pods and logs",
			reason:  "reading Services, Pods and their logs is what users of an application need",
			roles:   v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g(""), g("services", "pods", "pods/log"), view...)}},
			plurals: nil,
			want:    nil,
		},
		{
			name:    "plurals not known yet",
			reason:  "before the catalog's definitions are known (nil plurals) the own-kind check is skipped",
			roles:   v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("postgreses"), view...)}},
			plurals: map[string]bool(nil),
			want:    nil,
		},

		// Another catalog's kinds, or no kinds at all.
		{
			name:    "another catalog's kind",
			reason:  "a tenant role may not grant another catalog's kinds",
			roles:   v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes", "postgreses"), admin...)}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.admin[0].resources", `"postgreses": ` + notOwn}},
		},
		{
			name:    "the platform's Tenant kind",
			reason:  "Tenant is the platform's own application kind, not the catalog's",
			roles:   v1alpha1.TenantRoles{SuperAdmin: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("tenants"), "create")}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.superAdmin[0].resources", `"tenants": ` + notOwn}},
		},
		{
			name:    "a subresource of another catalog's kind",
			reason:  "a subresource of another catalog's kind is another catalog's too",
			roles:   v1alpha1.TenantRoles{Use: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("postgreses/status"), "get")}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.use[0].resources", `"postgreses/status"`}},
		},
		{
			name:    "a catalog without definitions",
			reason:  "a catalog without definitions has no kinds of its own (empty plurals), so none may be granted",
			roles:   v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes"), view...)}},
			plurals: map[string]bool{},
			want:    []rightsError{{"applications[0].tenantRoles.view[0].resources", "is not a kind of this catalog ()"}},
		},

		// Core resources that are the platform's to grant.
		{
			name:    "Secrets",
			reason:  "Secrets are the platform's to grant to tenant users, not a catalog's",
			roles:   v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g(""), g("secrets"), view...)}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.view[0].resources", `"secrets": ` + notCore}},
		},
		{
			name:    "ServiceAccounts",
			reason:  "ServiceAccounts are the platform's to grant",
			roles:   v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g(""), g("serviceaccounts"), view...)}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.admin[0].resources", `"serviceaccounts": ` + notCore}},
		},
		{
			name:    "tokens",
			reason:  "a token for a service account would let a user act as it",
			roles:   v1alpha1.TenantRoles{Use: []rbacv1.PolicyRule{rule(g(""), g("serviceaccounts/token"), "get")}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.use[0].resources", notCore}},
		},
		{
			name:    "Namespaces and ResourceQuotas",
			reason:  "Namespaces and ResourceQuotas are refused each by name",
			roles:   v1alpha1.TenantRoles{SuperAdmin: []rbacv1.PolicyRule{rule(g(""), g("namespaces", "resourcequotas"), view...)}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.superAdmin[0].resources", `"namespaces"`}, {"applications[0].tenantRoles.superAdmin[0].resources", `"resourcequotas"`}},
		},
		{
			name:    "exec",
			reason:  "exec into pods is a shell in a workload, the platform's to grant",
			roles:   v1alpha1.TenantRoles{Use: []rbacv1.PolicyRule{rule(g(""), g("pods/exec"), "get")}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.use[0].resources", `"pods/exec": ` + notCore}},
		},
		{
			name:    "ConfigMaps, which hold the projected cluster values",
			reason:  "ConfigMaps hold the projected cluster values, which tenant users must not change",
			roles:   v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g(""), g("configmaps"), view...)}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.admin[0].resources", `"configmaps": ` + notCore}},
		},
		{
			name:    "Endpoints",
			reason:  "writing Endpoints points a Service at any address, another tenant's Pods included (CVE-2021-25740)",
			roles:   v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g(""), g("endpoints"), view...)}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.admin[0].resources", `"endpoints": ` + notCore}},
		},
		{
			name:    "EndpointSlices",
			reason:  "EndpointSlices point a Service anywhere as Endpoints do, so their group is refused in tenant roles",
			roles:   v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g("discovery.k8s.io"), g("endpointslices"), view...)}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.admin[0].apiGroups", "CVE-2021-25740"}},
		},

		// Groups, verbs and URLs as for an application's rules.
		{
			name:    "RBAC",
			reason:  "tenant roles may not grant RBAC, as application rules may not",
			roles:   v1alpha1.TenantRoles{SuperAdmin: []rbacv1.PolicyRule{rule(g("rbac.authorization.k8s.io"), g("rolebindings"), admin...)}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.superAdmin[0].apiGroups", "is a Kubernetes API group"}},
		},
		{
			name:    "HelmReleases",
			reason:  "tenant roles may not grant Flux's kinds",
			roles:   v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g("helm.toolkit.fluxcd.io"), g("helmreleases"), view...)}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.view[0].apiGroups", "is Flux's"}},
		},
		{
			name:    "the platform's group",
			reason:  "tenant roles may not grant the platform's kinds",
			roles:   v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g("cozystack.io"), g("applicationdefinitions"), view...)}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.view[0].apiGroups", "is the platform's"}},
		},
		{
			name:    "Pods and workloads made by tenant users",
			reason:  "on Kubernetes' own resources tenant users get only get, list, watch, delete; both problems are reported",
			roles:   v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g("", "apps"), g("pods", "deployments"), "create", "delete")}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.admin[0].verbs", `"create": tenant users get only get, list, watch, delete on Kubernetes' own resources`}, {"applications[0].tenantRoles.admin[0].resources", `"deployments": ` + notCore}},
		},
		{
			name:    "wildcards",
			reason:  "wildcard verbs and resources are refused in tenant roles too",
			roles:   v1alpha1.TenantRoles{SuperAdmin: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("*"), "*")}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.superAdmin[0].verbs", `"*"`}, {"applications[0].tenantRoles.superAdmin[0].resources", "wildcards are refused"}},
		},
		{
			name:    "impersonate",
			reason:  "impersonate is refused in tenant roles too",
			roles:   v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g("postgresql.cnpg.io"), g("clusters"), "impersonate")}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.admin[0].verbs", `Unsupported value: "impersonate"`}},
		},
		{
			name:    "non-resource URLs",
			reason:  "non-resource URLs are refused in tenant roles too",
			roles:   v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{{NonResourceURLs: g("/healthz"), Verbs: g("get")}}},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.view[0].nonResourceURLs", "namespaced rules cannot apply to non-resource URLs"}},
		},
		{
			name:   "errors at every level, in level order",
			reason: "errors are reported level by level (view before superAdmin), each at its rule's index",
			roles: v1alpha1.TenantRoles{
				SuperAdmin: []rbacv1.PolicyRule{rule(g(""), g("secrets"), "get")},
				View:       []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes"), view...), rule(g(""), g("secrets"), view...)},
			},
			plurals: nil,
			want:    []rightsError{{"applications[0].tenantRoles.view[1].resources", "secrets"}, {"applications[0].tenantRoles.superAdmin[0].resources", "secrets"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plurals := tc.plurals
			if plurals == nil && tc.name != "plurals not known yet" {
				plurals = own
			}
			checkRightsErrors(t, tc.reason, artifact.CheckTenantRoleRules(p, &tc.roles, plurals), tc.want)
		})
	}
	if errs := artifact.CheckTenantRoleRules(p, nil, own); len(errs) != 0 {
		t.Errorf("no tenant roles: %v", errs)
	}
}

// Catalog.Validate checks both fields of every application (the plurals
// are not known there), and CheckDefinitions the plurals against the
// catalog's ApplicationDefinitions; both name the field in catalog.yaml.
func TestCatalogChecksApplicationRights(t *testing.T) {
	load := func(t *testing.T) *artifact.Catalog {
		t.Helper()
		c, err := artifact.LoadCatalog(testCatalog)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	t.Run("valid rights", func(t *testing.T) {
		c := load(t)
		c.Applications[0].Rules = []rbacv1.PolicyRule{rule(g(""), g("configmaps"))}
		c.Applications[0].TenantRoles = &v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes"), "get")}}
		if err := c.Validate(); err != nil {
			t.Errorf("Validate() = %v", err)
		}
		if err := artifact.CheckDefinitions(c, defs(t, "applicationdefinitions/echo.yaml", echoAD)); err != nil {
			t.Errorf("CheckDefinitions = %v", err)
		}
	})
	t.Run("Validate", func(t *testing.T) {
		c := load(t)
		c.Applications[0].Rules = []rbacv1.PolicyRule{rule(g(""), g("configmaps")), rule(g("rbac.authorization.k8s.io"), g("roles"))}
		c.Applications[0].TenantRoles = &v1alpha1.TenantRoles{Use: []rbacv1.PolicyRule{rule(g(""), g("secrets"), "get")}}
		err := c.Validate()
		for _, want := range []string{
			`applications[0].rules[1].apiGroups: Invalid value: "rbac.authorization.k8s.io": is a Kubernetes API group`,
			`applications[0].tenantRoles.use[0].resources: Invalid value: "secrets"`,
		} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Validate() = %v\nwant it to contain %q", err, want)
			}
		}
	})
	t.Run("CheckDefinitions", func(t *testing.T) {
		c := load(t)
		c.Applications[0].TenantRoles = &v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes", "postgreses"))}}
		if err := c.Validate(); err != nil {
			t.Fatalf("Validate() = %v: the plurals are not known there", err)
		}
		err := artifact.CheckDefinitions(c, defs(t, "applicationdefinitions/echo.yaml", echoAD))
		want := `catalog.yaml: applications[0].tenantRoles.admin[0].resources: Invalid value: "postgreses": is not a kind of this catalog (echoes): a catalog grants rights only on its own kinds`
		if err == nil || err.Error() != want {
			t.Errorf("CheckDefinitions = %v\nwant %s", err, want)
		}
		// Without definitions the catalog has no kind to grant rights on.
		err = artifact.CheckDefinitions(c, nil)
		if err == nil || !strings.Contains(err.Error(), `"echoes": is not a kind of this catalog ()`) {
			t.Errorf("CheckDefinitions without definitions = %v", err)
		}
	})
}

// A component that is not privileged gets the application allow-list; the
// refusals say it may be marked privileged instead, and a privileged one
// may ask for anything (the cluster operator consents through the
// Package's allowPrivileged; contracts/artifact/README.md, "Application
// rights").
func TestCheckComponentRules(t *testing.T) {
	p := field.NewPath("variants").Index(0).Child("components").Index(0).Child("rules")
	for _, tc := range []struct {
		name   string
		reason string
		rule   rbacv1.PolicyRule
		want   []rightsError
	}{
		{
			name:   "its own Deployments",
			reason: "a component may manage its own Deployments without privileged: true",
			rule:   rule(g("apps"), g("deployments"), "get", "create"),
			want:   nil,
		},
		{
			name:   "its own Secrets",
			reason: "a component may manage its own Secrets without privileged: true",
			rule:   rule(g(""), g("secrets"), "get", "create"),
			want:   nil,
		},
		{
			name:   "everything",
			reason: "all rights need privileged: true, and each part of the rule says so",
			rule:   rule(g("*"), g("*"), "*"),
			want: []rightsError{
				{"variants[0].components[0].rules[0].verbs", "must be privileged: true"},
				{"variants[0].components[0].rules[0].resources", "must be privileged: true"},
				{"variants[0].components[0].rules[0].apiGroups", "must be privileged: true"}},
		},
		{
			name:   "RBAC",
			reason: "RBAC rights need privileged: true",
			rule:   rule(g("rbac.authorization.k8s.io"), g("roles"), "create"),
			want:   []rightsError{{"variants[0].components[0].rules[0].apiGroups", "must be privileged: true"}},
		},
		{
			name:   "its Namespace",
			reason: "changing its Namespace needs privileged: true",
			rule:   rule(g(""), g("namespaces"), "update"),
			want:   []rightsError{{"variants[0].components[0].rules[0].resources", "must be privileged: true"}},
		},
		{
			name:   "escalate",
			reason: "escalate needs privileged: true",
			rule:   rule(g("example.com"), g("widgets"), "escalate"),
			want:   []rightsError{{"variants[0].components[0].rules[0].verbs", "must be privileged: true"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRightsErrors(t, tc.reason, artifact.CheckComponentRules(p, []rbacv1.PolicyRule{tc.rule}), tc.want)
		})
	}
}
