package conformance

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/schemas"
	"cozystack.io/sdk/charttest"
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

// exampleK2 and the SDK's charttest.K2Values are the same cluster values:
// each side keeps its copy (contracts does not import sdk, and the SDK
// stands alone, boundaries.yaml), so this test keeps them equal. Only the
// namespace's host differs, by namespace.
func TestExampleK2IsCharttestK2Values(t *testing.T) {
	if diff := cmp.Diff(charttest.K2Values()["_cluster"], exampleK2()["_cluster"]); diff != "" {
		t.Errorf("_cluster of charttest.K2Values (-) and exampleK2 (+) differ; change both:\n%s", diff)
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
		name   string
		reason string
		rules  []rbacv1.PolicyRule
		want   []string
	}{
		{
			name:   "no rule",
			reason: "no rule grants nothing: every verb is missing",
			rules:  nil,
			want:   all,
		},
		{
			name:   "every verb",
			reason: "one rule with every verb on the resource grants all",
			rules:  []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: all}},
			want:   nil,
		},
		{
			name:   "split over two rules",
			reason: "verbs add up over rules, and a rule naming several groups and resources counts for each",
			rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: all[:3]},
				{APIGroups: []string{"", "apps"}, Resources: []string{"configmaps", "secrets"}, Verbs: all[3:]},
			},
			want: nil,
		},
		{
			name:   "some verbs",
			reason: "only the verbs no rule grants are reported",
			rules:  []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create"}}},
			want:   []string{"list", "watch", "update", "patch", "delete"},
		},
		{
			name:   "another group",
			reason: "a rule in another group does not grant the core resource",
			rules:  []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"secrets"}, Verbs: all}},
			want:   all,
		},
		{
			name:   "by name only",
			reason: "a rule restricted to resourceNames grants nothing here: create and list cannot be restricted by name",
			rules:  []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"x"}, Verbs: all}},
			want:   all,
		},
		{
			name:   "wildcards",
			reason: "wildcards grant every verb on every resource",
			rules:  []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
			want:   nil,
		},
	} {
		if got := missingVerbs(tc.rules, "", "secrets", helmVerbs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: missing %v, want %v (%s)", tc.name, got, tc.want, tc.reason)
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
		reason  string
		write   map[string]string
		replace []string
		// want are fragments of the one finding's message and fix.
		message, fix []string
	}{
		{
			name:    "a resource not granted, for two objects",
			reason:  "an object the rules do not grant is reported once for all its kind's objects, naming the installer account, with the rule to add",
			write:   map[string]string{"charts/demo/templates/secrets.yaml": secrets},
			replace: nil,
			message: []string{"application demo renders Secret demo-example-a, Secret demo-example-b (v1)", "applications[0].rules do not grant secrets", "installer ServiceAccount (cozy-installer-demo)"},
			fix:     []string{`add {apiGroups: [""], resources: [secrets], verbs: [get, list, watch, create, update, patch, delete]} to applications[0].rules in catalog.yaml`},
		},
		{
			name:    "a resource granted without some verbs",
			reason:  "a kind granted with too few verbs is reported with the verbs missing",
			write:   map[string]string{"charts/demo/templates/secrets.yaml": secrets},
			replace: []string{"resources: [configmaps], verbs: [get, list, watch, create, update, patch, delete]}", "resources: [configmaps], verbs: [get, list, watch, create, update, patch, delete]}\n      - {apiGroups: [\"\"], resources: [secrets], verbs: [get, create]}"},
			message: []string{"applications[0].rules grant secrets without the verbs list, watch, update, patch, delete"},
			fix:     []string{`add {apiGroups: [""], resources: [secrets]`},
		},
		{
			name:    "a cluster-scoped object",
			reason:  "a cluster-scoped object in an application chart is refused: the installer has rights in the tenant namespace only",
			write:   map[string]string{"charts/demo/templates/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ .Release.Name }}\n"},
			replace: nil,
			message: []string{"renders Namespace demo-example (v1), which is cluster-scoped", "rights in its tenant namespace only"},
			fix:     []string{"remove it from the application chart", "clusterRules"},
		},
		{
			name:    "a CRD in the application chart's crds/",
			reason:  "a CRD in crds/ is cluster-scoped too, and Helm installs it, so it counts",
			write:   map[string]string{"charts/demo/crds/widgets.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions: []\n"},
			replace: nil,
			message: []string{"renders CustomResourceDefinition widgets.example.com (apiextensions.k8s.io/v1), which is cluster-scoped"},
			fix:     []string{"remove it from the application chart"},
		},
		{
			name:    "a kind no catalog may grant",
			reason:  "a kind no catalog may grant (RBAC) is refused with the fix to render none, not a rule to add",
			write:   map[string]string{"charts/demo/templates/hpa.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: x\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: x}\n"},
			replace: nil,
			message: []string{"no catalog may grant an application rbac.authorization.k8s.io/rolebindings (rbac.authorization.k8s.io is a Kubernetes API group"},
			fix:     []string{"render no RoleBinding in the application chart"},
		},
		{
			name:    "a kind no CRD defines, not granted",
			reason:  "a kind of no known CRD is guessed by its plural, and the fix says to use the real plural",
			write:   map[string]string{"charts/demo/templates/gadget.yaml": "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: x\n"},
			replace: nil,
			message: []string{"Gadget x (example.com/v1) (a kind neither Kubernetes' nor of a CRD the catalog ships: its resource is guessed as gadgets)"},
			fix:     []string{"add {apiGroups: [example.com], resources: [gadgets]", "with the kind's real plural if it is not gadgets"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := rightsFindings(seededRights(t, tc.write, tc.replace...))
			if len(fs) != 1 {
				t.Fatalf("%s: %d findings, want 1 (%s): %v", tc.name, len(fs), tc.reason, fs)
			}
			for _, w := range tc.message {
				if !strings.Contains(fs[0].Message, w) {
					t.Errorf("%s: message %q\nwant it to contain %q (%s)", tc.name, fs[0].Message, w, tc.reason)
				}
			}
			for _, w := range tc.fix {
				if !strings.Contains(fs[0].Fix, w) {
					t.Errorf("%s: fix %q\nwant it to contain %q (%s)", tc.name, fs[0].Fix, w, tc.reason)
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
