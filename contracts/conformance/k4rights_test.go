package conformance

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/schemas"
)

// The K2 values the rule renders with are a document the platform could
// project: valid under the K2 schema.
func TestExampleK2IsValid(t *testing.T) {
	s, err := schemas.Compile(schemas.K2ClusterValues)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(exampleK2()); err != nil {
		t.Errorf("exampleK2 is not valid under %s: %v", schemas.K2ClusterValues, err)
	}
}

// Every cluster-scoped kind listed is a kind the mapper knows (no typo),
// and maps as cluster-scoped; a few namespaced ones map as namespaced.
func TestBuiltinMapper(t *testing.T) {
	m := builtinMapper()
	for gk := range clusterScopedKinds {
		if _, cluster, ok := m.mapping(gk.WithVersion("")); !ok || !cluster {
			t.Errorf("%s: known %v, cluster-scoped %v; want a known cluster-scoped kind", gk, ok, cluster)
		}
	}
	for gvk, want := range map[schema.GroupVersionKind]string{
		{Version: "v1", Kind: "Endpoints"}:                                     "endpoints",
		{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}:     "networkpolicies",
		{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}:           "ingresses",
		{Group: "apps", Version: "v1", Kind: "StatefulSet"}:                    "statefulsets",
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}:      "roles",
		{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}: "horizontalpodautoscalers",
	} {
		if res, cluster, ok := m.mapping(gvk); !ok || cluster || res != want {
			t.Errorf("%s: resource %q, cluster-scoped %v, known %v; want namespaced %s", gvk, res, cluster, ok, want)
		}
	}
	if _, _, ok := m.mapping(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}); ok {
		t.Errorf("example.com Widget is known")
	}
}

func TestMissingVerbs(t *testing.T) {
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	for _, tc := range []struct {
		name  string
		rules []rbacv1.PolicyRule
		want  []string
	}{
		{"no rule", nil, all},
		{"every verb", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: all}}, nil},
		{"split over two rules", []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: all[:3]},
			{APIGroups: []string{"", "apps"}, Resources: []string{"configmaps", "secrets"}, Verbs: all[3:]},
		}, nil},
		{"some verbs", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create"}}}, []string{"list", "watch", "update", "patch", "delete"}},
		{"another group", []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"secrets"}, Verbs: all}}, all},
		{"by name only", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"x"}, Verbs: all}}, all},
		{"wildcards", []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}, nil},
	} {
		if got := missingVerbs(tc.rules, "", "secrets", helmVerbs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: missing %v, want %v", tc.name, got, tc.want)
		}
	}
}

// seededRights copies the base catalog, writes files into it and replaces
// text in catalog.yaml, and checks it.
func seededRights(t *testing.T, write map[string]string, replace ...string) *Report {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "catalog")
	if err := os.CopyFS(dir, os.DirFS("testdata/catalog")); err != nil {
		t.Fatal(err)
	}
	for p, content := range write {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(replace) > 0 {
		data, err := os.ReadFile(filepath.Join(dir, "catalog.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		out := strings.NewReplacer(replace...).Replace(string(data))
		if out == string(data) {
			t.Fatalf("catalog.yaml: %q replaces nothing", replace)
		}
		if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := CheckDir(dir, Options{PlatformVersion: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func rightsFindings(r *Report) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.RuleID == rightsRule {
			out = append(out, f)
		}
	}
	return out
}

// The messages name the chart, the objects, what is missing and the rule
// to add, at its place in catalog.yaml.
func TestApplicationRightsMessages(t *testing.T) {
	secrets := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-a\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-b\n"
	for _, tc := range []struct {
		name    string
		write   map[string]string
		replace []string
		// want are fragments of the one finding's message and fix.
		message, fix []string
	}{
		{"a resource not granted, for two objects",
			map[string]string{"charts/demo/templates/secrets.yaml": secrets}, nil,
			[]string{"application demo renders Secret demo-example-a, Secret demo-example-b (v1)", "applications[0].rules do not grant secrets", "installer ServiceAccount (cozy-installer-demo)"},
			[]string{`add {apiGroups: [""], resources: [secrets], verbs: [get, list, watch, create, update, patch, delete]} to applications[0].rules in catalog.yaml`}},
		{"a resource granted without some verbs",
			map[string]string{"charts/demo/templates/secrets.yaml": secrets},
			[]string{"resources: [configmaps], verbs: [get, list, watch, create, update, patch, delete]}", "resources: [configmaps], verbs: [get, list, watch, create, update, patch, delete]}\n      - {apiGroups: [\"\"], resources: [secrets], verbs: [get, create]}"},
			[]string{"applications[0].rules grant secrets without the verbs list, watch, update, patch, delete"},
			[]string{`add {apiGroups: [""], resources: [secrets]`}},
		{"a cluster-scoped object",
			map[string]string{"charts/demo/templates/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ .Release.Name }}\n"}, nil,
			[]string{"renders Namespace demo-example (v1), which is cluster-scoped", "rights in its tenant namespace only"},
			[]string{"remove it from the application chart", "clusterRules"}},
		{"a CRD in the application chart's crds/",
			map[string]string{"charts/demo/crds/widgets.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions: []\n"}, nil,
			[]string{"renders CustomResourceDefinition widgets.example.com (apiextensions.k8s.io/v1), which is cluster-scoped"},
			[]string{"remove it from the application chart"}},
		{"a kind no catalog may grant",
			map[string]string{"charts/demo/templates/hpa.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: x\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: x}\n"}, nil,
			[]string{"no catalog may grant an application rbac.authorization.k8s.io/rolebindings (rbac.authorization.k8s.io is a Kubernetes API group"},
			[]string{"render no RoleBinding in the application chart"}},
		{"a kind no CRD defines, not granted",
			map[string]string{"charts/demo/templates/gadget.yaml": "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: x\n"}, nil,
			[]string{"Gadget x (example.com/v1) (a kind neither Kubernetes' nor of a CRD the catalog ships: its resource is guessed as gadgets)"},
			[]string{"add {apiGroups: [example.com], resources: [gadgets]", "with the kind's real plural if it is not gadgets"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := rightsFindings(seededRights(t, tc.write, tc.replace...))
			if len(fs) != 1 {
				t.Fatalf("%d findings, want 1: %v", len(fs), fs)
			}
			for _, w := range tc.message {
				if !strings.Contains(fs[0].Message, w) {
					t.Errorf("message %q\nwant it to contain %q", fs[0].Message, w)
				}
			}
			for _, w := range tc.fix {
				if !strings.Contains(fs[0].Fix, w) {
					t.Errorf("fix %q\nwant it to contain %q", fs[0].Fix, w)
				}
			}
		})
	}
}

// A chart that does not render with its defaults is not checked, and the
// report says so; the platform's Tenant chart is not checked either.
func TestApplicationRightsSkipped(t *testing.T) {
	r := seededRights(t, map[string]string{"charts/demo/templates/broken.yaml": `{{ fail "demo needs a value" }}`})
	if len(rightsFindings(r)) != 0 || len(r.Skipped) != 1 ||
		!strings.HasPrefix(r.Skipped[0], "K4-application-rights: applications[0] (demo): the chart does not render") || !strings.Contains(r.Skipped[0], "demo needs a value") {
		t.Errorf("findings %v, skipped %q; want one skip naming the render error", rightsFindings(r), r.Skipped)
	}

	// The platform's catalog and its Tenant application.
	src, err := LoadDir("testdata/catalog")
	if err != nil {
		t.Fatal(err)
	}
	src.Catalog.Name = v1alpha1.PlatformSource
	src.Catalog.Applications[0].Name, src.Catalog.Applications[0].Kind = platformTenantApp, platformTenantKind
	fs, skipped := checkApplicationRights(src, loadCharts(src))
	if len(fs) != 0 || len(skipped) != 1 || !strings.Contains(skipped[0], "installs as cozy-tenant-installer") {
		t.Errorf("platform catalog: findings %v, skipped %q", fs, skipped)
	}
	// The same application in another catalog is checked.
	src.Catalog.Name = "not-platform"
	if _, skipped := checkApplicationRights(src, loadCharts(src)); len(skipped) != 0 {
		t.Errorf("another catalog's tenant application is skipped: %q", skipped)
	}
}

// Rendering leaves the source's charts as they were: the other rules and a
// second render read the same chart.
func TestRenderChartKeepsTheChart(t *testing.T) {
	src, err := LoadDir("testdata/catalog")
	if err != nil {
		t.Fatal(err)
	}
	c := loadCharts(src).get("charts/demo")
	values := len(c.chart.Values)
	for range 2 {
		objs, err := renderChart(c, "demo-example")
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != 1 || objs[0].file != "charts/demo/templates/configmap.yaml" {
			t.Fatalf("objects %v, want the ConfigMap of charts/demo/templates/configmap.yaml", objs)
		}
		if gvk, name, ns := objs[0].meta(); gvk.Kind != "ConfigMap" || name != "demo-example" || ns != "" {
			t.Errorf("object %s %s in %q", gvk, name, ns)
		}
	}
	if len(c.chart.Values) != values || c.chart.Values["_cluster"] != nil || len(c.chart.Dependencies()) != 1 || c.chart.Dependencies()[0].Parent() != c.chart {
		t.Errorf("the chart changed: values %v, dependencies %d", c.chart.Values, len(c.chart.Dependencies()))
	}
}
