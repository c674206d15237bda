package artifact_test

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
)

const testCatalog = "testdata/catalog"

func TestLoadCatalog(t *testing.T) {
	c, err := artifact.LoadCatalog(testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "demo" || c.Version != "0.1.0" || c.MinPlatformVersion != "0.1.0" {
		t.Errorf("name %q version %q minPlatformVersion %q, want demo 0.1.0 0.1.0", c.Name, c.Version, c.MinPlatformVersion)
	}
	if got, want := c.ChartPaths(), []string{"charts/echo-operator", "charts/echo", "charts/echo-tenant"}; !slices.Equal(got, want) {
		t.Errorf("ChartPaths() = %v, want %v", got, want)
	}
	want := map[string]string{"echo-operator": "charts/echo-operator", "echo": "charts/echo", "echo-tenant": "charts/echo-tenant"}
	if got := c.PublishedCharts(); !maps.Equal(got, want) {
		t.Errorf("PublishedCharts() = %v, want %v", got, want)
	}
	if app, ok := c.Application("echo-tenant"); !ok || app.Chart != "charts/echo-tenant" || app.Kind != "Echo" {
		t.Errorf("Application(echo-tenant) = %+v, %v, want chart charts/echo-tenant, kind Echo", app, ok)
	}
	if _, ok := c.Application("echo"); ok {
		t.Errorf("Application(echo) found the component echo")
	}
	v, ok := c.Variant("default")
	if !ok || len(v.Components) != 2 || !v.Components[0].Privileged || len(v.Components[0].ClusterRules) != 1 {
		t.Errorf("variant default = %+v, want two components, the first privileged with one cluster rule", v)
	}
	if string(v.Components[1].Values.Raw) != `{"message":"hello from the catalog"}` {
		t.Errorf("echo values = %s", v.Components[1].Values.Raw)
	}
	if _, ok := c.Variant("nope"); ok {
		t.Errorf("Variant(nope) found a variant")
	}
}

func TestLoadCatalogMissing(t *testing.T) {
	_, err := artifact.LoadCatalog(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "catalog.yaml: not found") {
		t.Fatalf("err = %v, want catalog.yaml: not found", err)
	}
}

func TestDecodeCatalogIsStrict(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"misspelt field with its path", "apiVersion: cozystack.io/v1alpha1\nkind: Catalog\nvariants:\n- name: a\n  components:\n  - name: b\n    chrt: charts/b\n",
			`unknown field "variants[0].components[0].chrt"`},
		{"unknown top-level field", "apiVersion: cozystack.io/v1alpha1\nkind: Catalog\nprovide: {}\n", `unknown field "provide"`},
		{"duplicate key", "name: a\nname: b\n", `"name" already set`},
		{"not YAML", "name: [a\n", "not valid YAML"},
		{"wrong type", "variants: {}\n", "does not decode as a Catalog"},
		{"empty", "# nothing\n", "empty document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := artifact.DecodeCatalog([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	rule := func(verbs ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}
	}
	for _, tc := range []struct {
		name   string
		change func(c *artifact.Catalog)
		want   []string // fragments of the error, in order of appearance
	}{
		{"apiVersion", func(c *artifact.Catalog) { c.APIVersion = "v1" }, []string{`apiVersion: Unsupported value: "v1"`}},
		{"kind", func(c *artifact.Catalog) { c.Kind = "Package" }, []string{`kind: Unsupported value: "Package"`}},
		{"no name", func(c *artifact.Catalog) { c.Name = "" }, []string{"name: Required value"}},
		{"bad name", func(c *artifact.Catalog) { c.Name = "Demo_X" }, []string{`name: Invalid value: "Demo_X"`}},
		{"v-prefixed version", func(c *artifact.Catalog) { c.Version = "v0.1.0" }, []string{`version: Invalid value: "v0.1.0"`, "no leading v"}},
		{"short minPlatformVersion", func(c *artifact.Catalog) { c.MinPlatformVersion = "1.2" }, []string{`minPlatformVersion: Invalid value: "1.2"`}},
		{"no minPlatformVersion", func(c *artifact.Catalog) { c.MinPlatformVersion = "" }, []string{"minPlatformVersion: Required value"}},
		{"bad property", func(c *artifact.Catalog) { c.RequiredProperties = []string{"Network.IP"} }, []string{`requiredProperties[0]: Invalid value: "Network.IP"`, "network.stableVMAddress"}},
		{"duplicate property", func(c *artifact.Catalog) { c.RequiredProperties = []string{"gpu", "gpu"} }, []string{`requiredProperties[1]: Duplicate value: "gpu"`}},
		{"lowercase kind", func(c *artifact.Catalog) { c.Provides.ApplicationKinds = []string{"echo"} }, []string{`provides.applicationKinds[0]: Invalid value: "echo"`}},
		{"bad strategy kind", func(c *artifact.Catalog) { c.Provides.BackupStrategyKinds = []string{"echo-dump"} }, []string{`provides.backupStrategyKinds[0]`}},
		{"no variants and no applications", func(c *artifact.Catalog) { c.Variants, c.Applications = nil, nil }, []string{"variants: Required value"}},
		{"duplicate variant", func(c *artifact.Catalog) { c.Variants[1].Name = "default" }, []string{`variants[1].name: Duplicate value: "default"`}},
		{"variant depends on its own catalog", func(c *artifact.Catalog) { c.Variants[1].DependsOn = []string{"demo"} }, []string{`variants[1].dependsOn[0]: Invalid value: "demo": a catalog cannot depend on itself`}},
		{"no components", func(c *artifact.Catalog) { c.Variants[1].Components = nil }, []string{"variants[1].components: Required value"}},
		{"duplicate component", func(c *artifact.Catalog) { c.Variants[0].Components[1].Name = "echo-operator" }, []string{`variants[0].components[1].name: Duplicate value: "echo-operator"`}},
		{"chart leaving the catalog", func(c *artifact.Catalog) { c.Variants[0].Components[0].Chart = "../x" }, []string{`variants[0].components[0].chart: Invalid value: "../x"`, "must stay inside the catalog directory"}},
		{"absolute chart", func(c *artifact.Catalog) { c.Variants[0].Components[0].Chart = "/charts/x" }, []string{"without a leading '/'"}},
		{"unclean chart", func(c *artifact.Catalog) { c.Variants[0].Components[0].Chart = "charts//x/" }, []string{`use "charts/x"`}},
		{"library as a component", func(c *artifact.Catalog) { c.Variants[0].Components[0].Chart = "lib/demo-lib" }, []string{"is a library"}},
		{"no namespace", func(c *artifact.Catalog) { c.Variants[0].Components[0].Namespace = "" }, []string{"variants[0].components[0].namespace: Required value"}},
		{"storage namespace of a Package", func(c *artifact.Catalog) { c.Variants[0].Components[1].Namespace = "cozy-releases-demo--0123456789" },
			[]string{`variants[0].components[1].namespace: Invalid value: "cozy-releases-demo--0123456789": namespace names beginning with "cozy-releases-" are reserved for Packages' release storage namespaces`, "privileged or not"}},
		{"privileged into a tenant namespace", func(c *artifact.Catalog) { c.Variants[0].Components[0].Namespace = "tenant-demo" },
			[]string{`variants[0].components[0].namespace: Invalid value: "tenant-demo": namespace names beginning with "tenant-" are reserved for tenant namespaces`}},
		{"system namespaces", func(c *artifact.Catalog) {
			c.Variants[0].Components[0].Namespace, c.Variants[0].Components[1].Namespace = "kube-system", "cozy-system"
		}, []string{`variants[0].components[0].namespace: Invalid value: "kube-system"`, `variants[0].components[1].namespace: Invalid value: "cozy-system": namespace cozy-system is reserved`}},
		{"unknown dependency", func(c *artifact.Catalog) { c.Variants[0].Components[1].DependsOn = []string{"nope"} }, []string{`variants[0].components[1].dependsOn[0]: Not found: "nope"`}},
		{"self dependency", func(c *artifact.Catalog) { c.Variants[0].Components[1].DependsOn = []string{"echo"} }, []string{"cannot depend on itself"}},
		{"dependency cycle", func(c *artifact.Catalog) { c.Variants[0].Components[0].DependsOn = []string{"echo"} },
			[]string{`variants[0].components: Invalid value: "echo -> echo-operator -> echo": dependsOn forms a cycle`}},
		{"cluster rules without privileged", func(c *artifact.Catalog) { c.Variants[0].Components[0].Privileged = false },
			[]string{"variants[0].components[0].clusterRules: Forbidden: cluster-wide rules need privileged: true"}},
		{"rule without verbs", func(c *artifact.Catalog) { c.Variants[0].Components[1].Rules = []rbacv1.PolicyRule{rule()} },
			[]string{"variants[0].components[1].rules[0].verbs: Required value"}},
		{"non-resource URL in a namespaced rule", func(c *artifact.Catalog) {
			c.Variants[0].Components[1].Rules = []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
		}, []string{"rules[0].nonResourceURLs", "move the rule to clusterRules"}},
		{"resource rule without resources", func(c *artifact.Catalog) {
			c.Variants[0].Components[0].ClusterRules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Verbs: []string{"get"}}}
		}, []string{"clusterRules[0].resources: Required value"}},
		{"values not a map", func(c *artifact.Catalog) {
			c.Variants[0].Components[1].Values = &apiextensionsv1.JSON{Raw: []byte(`[1,2]`)}
		}, []string{"variants[0].components[1].values: Invalid value"}},
		{"component name naming two charts", func(c *artifact.Catalog) { c.Variants[1].Components[0].Chart = "charts/echo-tenant" },
			[]string{`variants[1].components[0].chart: Invalid value: "charts/echo-tenant": component "echo" uses chart "charts/echo" in variants[0].components[1]`, "use the same chart or rename"}},
		{"no application name", func(c *artifact.Catalog) { c.Applications[0].Name = "" }, []string{"applications[0].name: Required value"}},
		{"bad application name", func(c *artifact.Catalog) { c.Applications[0].Name = "Echo.Tenant" }, []string{`applications[0].name: Invalid value: "Echo.Tenant"`}},
		{"duplicate application", func(c *artifact.Catalog) { c.Applications = append(c.Applications, c.Applications[0]) },
			[]string{`applications[1].name: Duplicate value: "echo-tenant"`}},
		{"application named like a component", func(c *artifact.Catalog) { c.Applications[0].Name = "echo" },
			[]string{`applications[0].name: Invalid value: "echo": is also the name of the component variants[0].components[1]`, "rename the application"}},
		{"application chart leaving the catalog", func(c *artifact.Catalog) { c.Applications[0].Chart = "../x" },
			[]string{`applications[0].chart: Invalid value: "../x"`, "must stay inside the catalog directory"}},
		{"no application chart", func(c *artifact.Catalog) { c.Applications[0].Chart = "" }, []string{`applications[0].chart: Invalid value: ""`, "a chart path is required"}},
		{"library as an application", func(c *artifact.Catalog) { c.Applications[0].Chart = "lib/demo-lib" }, []string{"applications[0].chart", "is a library"}},
		{"lowercase application kind", func(c *artifact.Catalog) { c.Applications[0].Kind = "echo" }, []string{`applications[0].kind: Invalid value: "echo": want a CamelCase kind`}},
		{"application kind not provided", func(c *artifact.Catalog) { c.Applications[0].Kind = "Postgres" },
			[]string{`applications[0].kind: Invalid value: "Postgres": is not in provides.applicationKinds [Echo]`}},
		{"two applications of one kind", func(c *artifact.Catalog) {
			c.Applications = append(c.Applications, v1alpha1.PackageApplication{Name: "echo-2", Chart: "charts/echo-tenant", Kind: "Echo"})
		}, []string{`applications[1].kind: Duplicate value: "Echo"`}},
		{"duplicate library", func(c *artifact.Catalog) { c.Libraries = append(c.Libraries, c.Libraries[0]) }, []string{`libraries[1].path: Duplicate value: "lib/demo-lib"`}},
		{"every error at once", func(c *artifact.Catalog) { c.Name = ""; c.Variants[0].Components[0].Namespace = "Bad" },
			[]string{"name: Required value", `variants[0].components[0].namespace: Invalid value: "Bad"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := artifact.LoadCatalog(testCatalog)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(c)
			err = c.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want an error with %q", tc.want)
			}
			rest := err.Error()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("Validate() = %v\nwant it to contain, in order, %q", err, tc.want)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// A catalog of applications only (the platform's own) needs no variant.
func TestValidateApplicationsOnly(t *testing.T) {
	c, err := artifact.LoadCatalog(testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	c.Variants = nil
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
}

func TestValidateBuiltNeedsLibraryVersions(t *testing.T) {
	c, err := artifact.LoadCatalog(testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	err = c.ValidateBuilt()
	if err == nil || !strings.Contains(err.Error(), "libraries[0].name") || !strings.Contains(err.Error(), "libraries[0].version: Required value") {
		t.Fatalf("ValidateBuilt() = %v, want libraries[0].name and libraries[0].version errors", err)
	}
	c.Libraries[0].Name, c.Libraries[0].Version = "demo-lib", "0.1.0"
	if err := c.ValidateBuilt(); err != nil {
		t.Fatalf("ValidateBuilt() = %v", err)
	}
}

func TestCheckChartPath(t *testing.T) {
	for p, ok := range map[string]bool{
		"charts/postgres": true, "postgres": true, "a/b_c/d-1.2": true,
		"": false, ".": false, "..": false, "a/../b": false, "./a": false, "a/": false, "/a": false,
		"a b": false, `a\b`: false, strings.Repeat("a", 256): false,
	} {
		if err := artifact.CheckChartPath(p); (err == nil) != ok {
			t.Errorf("CheckChartPath(%q) = %v, want ok=%v", p, err, ok)
		}
	}
}

// The catalog.yaml example in README.md is a valid catalog, so the
// document cannot drift from the schema, and vendors no cozy-lib as a
// library of the catalog: K5 takes cozy-lib only as the platform's OCI
// chart, vendored in each chart (contracts/schemas/v1alpha1/k5-cozy-lib.md).
func TestReadmeExampleIsValid(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "```yaml\n# catalog.yaml\n", "```\n"
	_, rest, ok := strings.Cut(string(data), start)
	if !ok {
		t.Fatalf("README.md has no block starting with %q", start)
	}
	doc, _, _ := strings.Cut(rest, end)
	c, err := artifact.DecodeCatalog([]byte(doc))
	if err != nil {
		t.Fatalf("README.md example: %v", err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("README.md example: %v", err)
	}
	for _, lib := range c.Libraries {
		if strings.Contains(lib.Path, "cozy-lib") {
			t.Errorf("README.md example: libraries names %s, a layout K5 forbids", lib.Path)
		}
	}
}
