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
func checkRightsErrors(t *testing.T, errs field.ErrorList, want []rightsError) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("%d errors, want %d:\n%v", len(errs), len(want), errs.ToAggregate())
	}
	for i, w := range want {
		if errs[i].Field != w.path || !strings.Contains(errs[i].Error(), w.msg) {
			t.Errorf("error %d = %q (at %s)\nwant at %s, containing %q", i, errs[i].Error(), errs[i].Field, w.path, w.msg)
		}
	}
}

func TestCheckApplicationRules(t *testing.T) {
	p := field.NewPath("applications").Index(0).Child("rules")
	const at = "applications[0].rules[0]"
	notCore := "is not a core resource a catalog may declare here"
	kube := "is a Kubernetes API group a catalog may not grant rights in"
	for _, tc := range []struct {
		name string
		rule rbacv1.PolicyRule
		want []rightsError
	}{
		// Accepted: the namespaced kinds an application chart renders.
		{"core ConfigMaps, Secrets, Services, PVCs, ServiceAccounts", rule(g(""), g("configmaps", "secrets", "services", "persistentvolumeclaims", "serviceaccounts")), nil},
		{"apps Deployments and StatefulSets", rule(g("apps"), g("deployments", "statefulsets")), nil},
		{"batch with deletecollection", rule(g("batch"), g("jobs", "cronjobs"), "get", "delete", "deletecollection"), nil},
		{"networking.k8s.io NetworkPolicies and Ingresses", rule(g("networking.k8s.io"), g("networkpolicies", "ingresses")), nil},
		{"an operator's CRD group", rule(g("postgresql.cnpg.io"), g("clusters", "databases")), nil},
		{"a SIG group under x-k8s.io", rule(g("cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io"), g("clusters", "kubevirtclusters")), nil},

		// Wildcards.
		{"wildcard verb", rule(g(""), g("configmaps"), "get", "*"), []rightsError{{at + ".verbs", `Unsupported value: "*"`}}},
		{"wildcard group", rule(g("*"), g("deployments")), []rightsError{{at + ".apiGroups", "wildcards are refused"}}},
		{"wildcard resource", rule(g("apps"), g("*")), []rightsError{{at + ".resources", "wildcards are refused"}}},
		{"wildcard resource with a subresource", rule(g("apps"), g("*/scale")), []rightsError{{at + ".resources", "wildcards are refused"}}},
		{"wildcard core resource", rule(g(""), g("*")), []rightsError{{at + ".resources", "wildcards are refused"}}},

		// Verbs that act on rights or other API machinery.
		{"escalate", rule(g("postgresql.cnpg.io"), g("clusters"), "escalate"), []rightsError{{at + ".verbs", `Unsupported value: "escalate"`}}},
		{"bind", rule(g("postgresql.cnpg.io"), g("clusters"), "bind"), []rightsError{{at + ".verbs", `Unsupported value: "bind"`}}},
		{"impersonate", rule(g(""), g("serviceaccounts"), "impersonate"), []rightsError{{at + ".verbs", `Unsupported value: "impersonate"`}}},
		{"empty verbs", rbacv1.PolicyRule{APIGroups: g(""), Resources: g("configmaps")}, []rightsError{{at + ".verbs", "Required value"}}},

		// Groups no application reaches.
		{"RBAC", rule(g("rbac.authorization.k8s.io"), g("roles", "rolebindings")), []rightsError{{at + ".apiGroups", kube}}},
		{"CRDs", rule(g("apiextensions.k8s.io"), g("customresourcedefinitions")), []rightsError{{at + ".apiGroups", kube}}},
		{"admission", rule(g("admissionregistration.k8s.io"), g("validatingadmissionpolicies")), []rightsError{{at + ".apiGroups", kube}}},
		{"storage", rule(g("storage.k8s.io"), g("csistoragecapacities")), []rightsError{{at + ".apiGroups", kube}}},
		{"Flux's HelmReleases", rule(g("helm.toolkit.fluxcd.io"), g("helmreleases")), []rightsError{{at + ".apiGroups", "is Flux's"}}},
		{"Flux's sources", rule(g("source.toolkit.fluxcd.io"), g("ocirepositories")), []rightsError{{at + ".apiGroups", "is Flux's"}}},
		{"the Flux Operator's ResourceSets", rule(g("fluxcd.controlplane.io"), g("resourcesets")), []rightsError{{at + ".apiGroups", "is Flux's"}}},
		{"the platform's group", rule(g("cozystack.io"), g("packages")), []rightsError{{at + ".apiGroups", "is the platform's"}}},
		{"a platform subgroup", rule(g("core.cozystack.io"), g("tenantnamespaces")), []rightsError{{at + ".apiGroups", "is the platform's"}}},
		{"application kinds", rule(g("apps.cozystack.io"), g("postgreses")), []rightsError{{at + ".apiGroups", "applications are created through the application API"}}},

		// Core resources that are not an application's.
		{"Namespaces", rule(g(""), g("namespaces")), []rightsError{{at + ".resources", notCore}}},
		{"ResourceQuotas", rule(g(""), g("resourcequotas")), []rightsError{{at + ".resources", notCore}}},
		{"LimitRanges", rule(g(""), g("limitranges")), []rightsError{{at + ".resources", notCore}}},
		{"tokens", rule(g(""), g("serviceaccounts/token"), "get"), []rightsError{{at + ".resources", notCore}}},
		{"exec", rule(g(""), g("pods/exec"), "get"), []rightsError{{at + ".resources", notCore}}},
		{"Nodes", rule(g(""), g("nodes")), []rightsError{{at + ".resources", notCore}}},
		{"a rule on two groups names core resources in both", rule(g("", "apps"), g("configmaps", "deployments")), []rightsError{{at + ".resources", `"deployments": ` + notCore}}},

		// Non-resource URLs are not namespaced.
		{"non-resource URLs", rbacv1.PolicyRule{NonResourceURLs: g("/metrics"), Verbs: g("get")}, []rightsError{{at + ".nonResourceURLs", "namespaced rules cannot apply to non-resource URLs"}}},

		{"every problem of a rule", rule(g("*", "rbac.authorization.k8s.io"), g("*"), "escalate"), []rightsError{
			{at + ".verbs", "escalate"}, {at + ".resources", "wildcards"}, {at + ".apiGroups", "wildcards"}, {at + ".apiGroups", kube}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRightsErrors(t, artifact.CheckApplicationRules(p, []rbacv1.PolicyRule{tc.rule}), tc.want)
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
		name  string
		roles v1alpha1.TenantRoles
		// plurals are the catalog's; nil means own.
		plurals map[string]bool
		want    []rightsError
	}{
		// Accepted: the convention (view reads the kind, admin changes it)
		// and what users of an application need.
		{"view and admin on the catalog's own kind", v1alpha1.TenantRoles{
			View:  []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes"), view...)},
			Admin: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes"), admin...)},
		}, nil, nil},
		{"a subresource of the catalog's own kind", v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes/status"), "get")}}, nil, nil},
		{"consoles in use", v1alpha1.TenantRoles{Use: []rbacv1.PolicyRule{
			rule(g("subresources.kubevirt.io"), g("virtualmachineinstances/console", "virtualmachineinstances/vnc"), "get"),
			rule(g("subresources.kubevirt.io"), g("virtualmachineinstances/portforward"), "get", "update"),
		}}, nil, nil},
		{"an operator's kind in super-admin", v1alpha1.TenantRoles{SuperAdmin: []rbacv1.PolicyRule{rule(g("postgresql.cnpg.io"), g("backups"), "create")}}, nil, nil},
		{"core Services, Pods and logs", v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g(""), g("services", "pods", "pods/log"), view...)}}, nil, nil},
		{"plurals not known yet", v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("postgreses"), view...)}}, map[string]bool(nil), nil},

		// Another catalog's kinds, or no kinds at all.
		{"another catalog's kind", v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes", "postgreses"), admin...)}}, nil,
			[]rightsError{{"applications[0].tenantRoles.admin[0].resources", `"postgreses": ` + notOwn}}},
		{"the platform's Tenant kind", v1alpha1.TenantRoles{SuperAdmin: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("tenants"), "create")}}, nil,
			[]rightsError{{"applications[0].tenantRoles.superAdmin[0].resources", `"tenants": ` + notOwn}}},
		{"a subresource of another catalog's kind", v1alpha1.TenantRoles{Use: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("postgreses/status"), "get")}}, nil,
			[]rightsError{{"applications[0].tenantRoles.use[0].resources", `"postgreses/status"`}}},
		{"a catalog without definitions", v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes"), view...)}}, map[string]bool{},
			[]rightsError{{"applications[0].tenantRoles.view[0].resources", "is not a kind of this catalog ()"}}},

		// Core resources that are the platform's to grant.
		{"Secrets", v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g(""), g("secrets"), view...)}}, nil,
			[]rightsError{{"applications[0].tenantRoles.view[0].resources", `"secrets": ` + notCore}}},
		{"ServiceAccounts", v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g(""), g("serviceaccounts"), view...)}}, nil,
			[]rightsError{{"applications[0].tenantRoles.admin[0].resources", `"serviceaccounts": ` + notCore}}},
		{"tokens", v1alpha1.TenantRoles{Use: []rbacv1.PolicyRule{rule(g(""), g("serviceaccounts/token"), "get")}}, nil,
			[]rightsError{{"applications[0].tenantRoles.use[0].resources", notCore}}},
		{"Namespaces and ResourceQuotas", v1alpha1.TenantRoles{SuperAdmin: []rbacv1.PolicyRule{rule(g(""), g("namespaces", "resourcequotas"), view...)}}, nil,
			[]rightsError{{"applications[0].tenantRoles.superAdmin[0].resources", `"namespaces"`}, {"applications[0].tenantRoles.superAdmin[0].resources", `"resourcequotas"`}}},
		{"exec", v1alpha1.TenantRoles{Use: []rbacv1.PolicyRule{rule(g(""), g("pods/exec"), "get")}}, nil,
			[]rightsError{{"applications[0].tenantRoles.use[0].resources", `"pods/exec": ` + notCore}}},
		{"ConfigMaps, which hold the projected cluster values", v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g(""), g("configmaps"), view...)}}, nil,
			[]rightsError{{"applications[0].tenantRoles.admin[0].resources", `"configmaps": ` + notCore}}},
		{"Endpoints", v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g(""), g("endpoints"), view...)}}, nil,
			[]rightsError{{"applications[0].tenantRoles.admin[0].resources", `"endpoints": ` + notCore}}},
		{"EndpointSlices", v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g("discovery.k8s.io"), g("endpointslices"), view...)}}, nil,
			[]rightsError{{"applications[0].tenantRoles.admin[0].apiGroups", "CVE-2021-25740"}}},

		// Groups, verbs and URLs as for an application's rules.
		{"RBAC", v1alpha1.TenantRoles{SuperAdmin: []rbacv1.PolicyRule{rule(g("rbac.authorization.k8s.io"), g("rolebindings"), admin...)}}, nil,
			[]rightsError{{"applications[0].tenantRoles.superAdmin[0].apiGroups", "is a Kubernetes API group"}}},
		{"HelmReleases", v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g("helm.toolkit.fluxcd.io"), g("helmreleases"), view...)}}, nil,
			[]rightsError{{"applications[0].tenantRoles.view[0].apiGroups", "is Flux's"}}},
		{"the platform's group", v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{rule(g("cozystack.io"), g("applicationdefinitions"), view...)}}, nil,
			[]rightsError{{"applications[0].tenantRoles.view[0].apiGroups", "is the platform's"}}},
		{"Pods and workloads made by tenant users", v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g("", "apps"), g("pods", "deployments"), "create", "delete")}}, nil,
			[]rightsError{{"applications[0].tenantRoles.admin[0].verbs", `"create": tenant users get only get, list, watch, delete on Kubernetes' own resources`}, {"applications[0].tenantRoles.admin[0].resources", `"deployments": ` + notCore}}},
		{"wildcards", v1alpha1.TenantRoles{SuperAdmin: []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("*"), "*")}}, nil,
			[]rightsError{{"applications[0].tenantRoles.superAdmin[0].verbs", `"*"`}, {"applications[0].tenantRoles.superAdmin[0].resources", "wildcards are refused"}}},
		{"impersonate", v1alpha1.TenantRoles{Admin: []rbacv1.PolicyRule{rule(g("postgresql.cnpg.io"), g("clusters"), "impersonate")}}, nil,
			[]rightsError{{"applications[0].tenantRoles.admin[0].verbs", `Unsupported value: "impersonate"`}}},
		{"non-resource URLs", v1alpha1.TenantRoles{View: []rbacv1.PolicyRule{{NonResourceURLs: g("/healthz"), Verbs: g("get")}}}, nil,
			[]rightsError{{"applications[0].tenantRoles.view[0].nonResourceURLs", "namespaced rules cannot apply to non-resource URLs"}}},
		{"errors at every level, in level order", v1alpha1.TenantRoles{
			SuperAdmin: []rbacv1.PolicyRule{rule(g(""), g("secrets"), "get")},
			View:       []rbacv1.PolicyRule{rule(g("apps.cozystack.io"), g("echoes"), view...), rule(g(""), g("secrets"), view...)},
		}, nil, []rightsError{{"applications[0].tenantRoles.view[1].resources", "secrets"}, {"applications[0].tenantRoles.superAdmin[0].resources", "secrets"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plurals := tc.plurals
			if plurals == nil && tc.name != "plurals not known yet" {
				plurals = own
			}
			checkRightsErrors(t, artifact.CheckTenantRoleRules(p, &tc.roles, plurals), tc.want)
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
		name string
		rule rbacv1.PolicyRule
		want []rightsError
	}{
		{"its own Deployments", rule(g("apps"), g("deployments"), "get", "create"), nil},
		{"its own Secrets", rule(g(""), g("secrets"), "get", "create"), nil},
		{"everything", rule(g("*"), g("*"), "*"), []rightsError{
			{"variants[0].components[0].rules[0].verbs", "must be privileged: true"},
			{"variants[0].components[0].rules[0].resources", "must be privileged: true"},
			{"variants[0].components[0].rules[0].apiGroups", "must be privileged: true"}}},
		{"RBAC", rule(g("rbac.authorization.k8s.io"), g("roles"), "create"), []rightsError{{"variants[0].components[0].rules[0].apiGroups", "must be privileged: true"}}},
		{"its Namespace", rule(g(""), g("namespaces"), "update"), []rightsError{{"variants[0].components[0].rules[0].resources", "must be privileged: true"}}},
		{"escalate", rule(g("example.com"), g("widgets"), "escalate"), []rightsError{{"variants[0].components[0].rules[0].verbs", "must be privileged: true"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRightsErrors(t, artifact.CheckComponentRules(p, []rbacv1.PolicyRule{tc.rule}), tc.want)
		})
	}
}
