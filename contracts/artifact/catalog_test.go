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
		reason          string
	}{
		{
			name:   "misspelt field with its path",
			doc:    "apiVersion: cozystack.io/v1alpha1\nkind: Catalog\nvariants:\n- name: a\n  components:\n  - name: b\n    chrt: charts/b\n",
			want:   `unknown field "variants[0].components[0].chrt"`,
			reason: "catalog.yaml is decoded strictly, and a misspelt field is named by its full path",
		},
		{
			name:   "unknown top-level field",
			doc:    "apiVersion: cozystack.io/v1alpha1\nkind: Catalog\nprovide: {}\n",
			want:   `unknown field "provide"`,
			reason: "a misspelt top-level field is refused, not ignored",
		},
		{
			name:   "duplicate key",
			doc:    "name: a\nname: b\n",
			want:   `"name" already set`,
			reason: "a duplicate key is refused rather than the last value silently winning",
		},
		{
			name:   "not YAML",
			doc:    "name: [a\n",
			want:   "not valid YAML",
			reason: "YAML that does not parse is refused as such",
		},
		{
			name:   "wrong type",
			doc:    "variants: {}\n",
			want:   "does not decode as a Catalog",
			reason: "a field of the wrong type is refused as not a Catalog",
		},
		{
			name:   "empty",
			doc:    "# nothing\n",
			want:   "empty document",
			reason: "a file with no document is refused, not read as an empty catalog",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := artifact.DecodeCatalog([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: err = %v, want it to contain %q (%s)", tc.name, err, tc.want, tc.reason)
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
		reason string
		change func(c *artifact.Catalog)
		want   []string // fragments of the error, in order of appearance
	}{
		{
			name:   "apiVersion",
			reason: "only apiVersion cozystack.io/v1alpha1 is a catalog",
			change: func(c *artifact.Catalog) { c.APIVersion = "v1" },
			want:   []string{`apiVersion: Unsupported value: "v1"`},
		},
		{
			name:   "kind",
			reason: "only kind Catalog is a catalog",
			change: func(c *artifact.Catalog) { c.Kind = "Package" },
			want:   []string{`kind: Unsupported value: "Package"`},
		},
		{
			name:   "no name",
			reason: "a catalog is named: its name is required",
			change: func(c *artifact.Catalog) { c.Name = "" },
			want:   []string{"name: Required value"},
		},
		{
			name:   "bad name",
			reason: "a catalog name is a DNS label",
			change: func(c *artifact.Catalog) { c.Name = "Demo_X" },
			want:   []string{`name: Invalid value: "Demo_X"`},
		},
		{
			name:   "v-prefixed version",
			reason: "versions are semver without a leading v, so tags and comparisons agree",
			change: func(c *artifact.Catalog) { c.Version = "v0.1.0" },
			want:   []string{`version: Invalid value: "v0.1.0"`, "no leading v"},
		},
		{
			name:   "short minPlatformVersion",
			reason: "minPlatformVersion is full semver: major.minor.patch",
			change: func(c *artifact.Catalog) { c.MinPlatformVersion = "1.2" },
			want:   []string{`minPlatformVersion: Invalid value: "1.2"`},
		},
		{
			name:   "no minPlatformVersion",
			reason: "minPlatformVersion is required so a catalog says which platform it needs",
			change: func(c *artifact.Catalog) { c.MinPlatformVersion = "" },
			want:   []string{"minPlatformVersion: Required value"},
		},
		{
			name:   "bad property",
			reason: "a required property is one the platform knows; the error lists the known ones",
			change: func(c *artifact.Catalog) { c.RequiredProperties = []string{"Network.IP"} },
			want:   []string{`requiredProperties[0]: Invalid value: "Network.IP"`, "network.stableVMAddress"},
		},
		{
			name:   "duplicate property",
			reason: "a required property is listed once",
			change: func(c *artifact.Catalog) { c.RequiredProperties = []string{"gpu", "gpu"} },
			want:   []string{`requiredProperties[1]: Duplicate value: "gpu"`},
		},
		{
			name:   "lowercase kind",
			reason: "provided kinds are CamelCase Kubernetes kinds",
			change: func(c *artifact.Catalog) { c.Provides.ApplicationKinds = []string{"echo"} },
			want:   []string{`provides.applicationKinds[0]: Invalid value: "echo"`},
		},
		{
			name:   "bad strategy kind",
			reason: "provided backup strategy kinds are CamelCase kinds too",
			change: func(c *artifact.Catalog) { c.Provides.BackupStrategyKinds = []string{"echo-dump"} },
			want:   []string{`provides.backupStrategyKinds[0]`},
		},
		{
			name:   "no variants and no applications",
			reason: "a catalog with neither variants nor applications installs nothing",
			change: func(c *artifact.Catalog) { c.Variants, c.Applications = nil, nil },
			want:   []string{"variants: Required value"},
		},
		{
			name:   "duplicate variant",
			reason: "variant names are unique",
			change: func(c *artifact.Catalog) { c.Variants[1].Name = "default" },
			want:   []string{`variants[1].name: Duplicate value: "default"`},
		},
		{
			name:   "variant depends on its own catalog",
			reason: "a variant cannot depend on its own catalog",
			change: func(c *artifact.Catalog) { c.Variants[1].DependsOn = []string{"demo"} },
			want:   []string{`variants[1].dependsOn[0]: Invalid value: "demo": a catalog cannot depend on itself`},
		},
		{
			name:   "no components",
			reason: "a variant installs at least one component",
			change: func(c *artifact.Catalog) { c.Variants[1].Components = nil },
			want:   []string{"variants[1].components: Required value"},
		},
		{
			name:   "duplicate component",
			reason: "component names are unique within a variant",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[1].Name = "echo-operator" },
			want:   []string{`variants[0].components[1].name: Duplicate value: "echo-operator"`},
		},
		{
			name:   "chart leaving the catalog",
			reason: "a chart path stays inside the catalog directory",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[0].Chart = "../x" },
			want:   []string{`variants[0].components[0].chart: Invalid value: "../x"`, "must stay inside the catalog directory"},
		},
		{
			name:   "absolute chart",
			reason: "a chart path is relative to the catalog",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[0].Chart = "/charts/x" },
			want:   []string{"without a leading '/'"},
		},
		{
			name:   "unclean chart",
			reason: "a chart path is clean, and the error gives the clean form",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[0].Chart = "charts//x/" },
			want:   []string{`use "charts/x"`},
		},
		{
			name:   "library as a component",
			reason: "a library chart cannot be installed as a component",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[0].Chart = "lib/demo-lib" },
			want:   []string{"is a library"},
		},
		{
			name:   "no namespace",
			reason: "a component names the namespace it installs into",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[0].Namespace = "" },
			want:   []string{"variants[0].components[0].namespace: Required value"},
		},
		{
			name:   "storage namespace of a Package",
			reason: "cozy-releases- namespaces hold Packages' release storage, for any component, privileged or not",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[1].Namespace = "cozy-releases-demo--0123456789" },
			want:   []string{`variants[0].components[1].namespace: Invalid value: "cozy-releases-demo--0123456789": namespace names beginning with "cozy-releases-" are reserved for Packages' release storage namespaces`, "privileged or not"},
		},
		{
			name:   "privileged into a tenant namespace",
			reason: "tenant- namespaces are the tenants', even for a privileged component",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[0].Namespace = "tenant-demo" },
			want:   []string{`variants[0].components[0].namespace: Invalid value: "tenant-demo": namespace names beginning with "tenant-" are reserved for tenant namespaces`},
		},
		{
			name:   "system namespaces",
			reason: "kube-system and cozy-system are reserved, and each offending component is named",
			change: func(c *artifact.Catalog) {
				c.Variants[0].Components[0].Namespace, c.Variants[0].Components[1].Namespace = "kube-system", "cozy-system"
			},
			want: []string{`variants[0].components[0].namespace: Invalid value: "kube-system"`, `variants[0].components[1].namespace: Invalid value: "cozy-system": namespace cozy-system is reserved`},
		},
		{
			name:   "unknown dependency",
			reason: "a component depends only on components of its variant",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[1].DependsOn = []string{"nope"} },
			want:   []string{`variants[0].components[1].dependsOn[0]: Not found: "nope"`},
		},
		{
			name:   "self dependency",
			reason: "a component cannot depend on itself",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[1].DependsOn = []string{"echo"} },
			want:   []string{"cannot depend on itself"},
		},
		{
			name:   "dependency cycle",
			reason: "a dependsOn cycle is refused and the error spells the cycle",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[0].DependsOn = []string{"echo"} },
			want:   []string{`variants[0].components: Invalid value: "echo -> echo-operator -> echo": dependsOn forms a cycle`},
		},
		{
			name:   "cluster rules without privileged",
			reason: "cluster-wide rules need privileged: true",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[0].Privileged = false },
			want:   []string{"variants[0].components[0].clusterRules: Forbidden: cluster-wide rules need privileged: true"},
		},
		{
			name:   "rule without verbs",
			reason: "a rule without verbs grants nothing and is a mistake",
			change: func(c *artifact.Catalog) { c.Variants[0].Components[1].Rules = []rbacv1.PolicyRule{rule()} },
			want:   []string{"variants[0].components[1].rules[0].verbs: Required value"},
		},
		{
			name:   "non-resource URL in a namespaced rule",
			reason: "a namespaced rule cannot hold non-resource URLs; the error says to move it to clusterRules",
			change: func(c *artifact.Catalog) {
				c.Variants[0].Components[1].Rules = []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
			},
			want: []string{"rules[0].nonResourceURLs", "move the rule to clusterRules"},
		},
		{
			name:   "resource rule without resources",
			reason: "a resource rule names its resources",
			change: func(c *artifact.Catalog) {
				c.Variants[0].Components[0].ClusterRules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Verbs: []string{"get"}}}
			},
			want: []string{"clusterRules[0].resources: Required value"},
		},
		{
			name:   "values not a map",
			reason: "a component's values are a map, as Helm values are",
			change: func(c *artifact.Catalog) {
				c.Variants[0].Components[1].Values = &apiextensionsv1.JSON{Raw: []byte(`[1,2]`)}
			},
			want: []string{"variants[0].components[1].values: Invalid value"},
		},
		{
			name:   "component name naming two charts",
			reason: "a component name means one chart in every variant; the error names both places and the fix",
			change: func(c *artifact.Catalog) { c.Variants[1].Components[0].Chart = "charts/echo-tenant" },
			want:   []string{`variants[1].components[0].chart: Invalid value: "charts/echo-tenant": component "echo" uses chart "charts/echo" in variants[0].components[1]`, "use the same chart or rename"},
		},
		{
			name:   "no application name",
			reason: "an application is named",
			change: func(c *artifact.Catalog) { c.Applications[0].Name = "" },
			want:   []string{"applications[0].name: Required value"},
		},
		{
			name:   "bad application name",
			reason: "an application name is a DNS label",
			change: func(c *artifact.Catalog) { c.Applications[0].Name = "Echo.Tenant" },
			want:   []string{`applications[0].name: Invalid value: "Echo.Tenant"`},
		},
		{
			name:   "duplicate application",
			reason: "application names are unique",
			change: func(c *artifact.Catalog) { c.Applications = append(c.Applications, c.Applications[0]) },
			want:   []string{`applications[1].name: Duplicate value: "echo-tenant"`},
		},
		{
			name:   "application named like a component",
			reason: "application and component names share one space, so their releases cannot collide",
			change: func(c *artifact.Catalog) { c.Applications[0].Name = "echo" },
			want:   []string{`applications[0].name: Invalid value: "echo": is also the name of the component variants[0].components[1]`, "rename the application"},
		},
		{
			name:   "application chart leaving the catalog",
			reason: "an application chart path stays inside the catalog directory",
			change: func(c *artifact.Catalog) { c.Applications[0].Chart = "../x" },
			want:   []string{`applications[0].chart: Invalid value: "../x"`, "must stay inside the catalog directory"},
		},
		{
			name:   "no application chart",
			reason: "an application has a chart",
			change: func(c *artifact.Catalog) { c.Applications[0].Chart = "" },
			want:   []string{`applications[0].chart: Invalid value: ""`, "a chart path is required"},
		},
		{
			name:   "library as an application",
			reason: "a library chart cannot be installed as an application",
			change: func(c *artifact.Catalog) { c.Applications[0].Chart = "lib/demo-lib" },
			want:   []string{"applications[0].chart", "is a library"},
		},
		{
			name:   "lowercase application kind",
			reason: "an application kind is a CamelCase kind",
			change: func(c *artifact.Catalog) { c.Applications[0].Kind = "echo" },
			want:   []string{`applications[0].kind: Invalid value: "echo": want a CamelCase kind`},
		},
		{
			name:   "application kind not provided",
			reason: "an application's kind is one the catalog provides",
			change: func(c *artifact.Catalog) { c.Applications[0].Kind = "Postgres" },
			want:   []string{`applications[0].kind: Invalid value: "Postgres": is not in provides.applicationKinds [Echo]`},
		},
		{
			name:   "two applications of one kind",
			reason: "one kind is served by one application",
			change: func(c *artifact.Catalog) {
				c.Applications = append(c.Applications, v1alpha1.PackageApplication{Name: "echo-2", Chart: "charts/echo-tenant", Kind: "Echo"})
			},
			want: []string{`applications[1].kind: Duplicate value: "Echo"`},
		},
		{
			name:   "duplicate library",
			reason: "a library is listed once",
			change: func(c *artifact.Catalog) { c.Libraries = append(c.Libraries, c.Libraries[0]) },
			want:   []string{`libraries[1].path: Duplicate value: "lib/demo-lib"`},
		},
		{
			name:   "every error at once",
			reason: "every error is reported at once, not only the first",
			change: func(c *artifact.Catalog) { c.Name = ""; c.Variants[0].Components[0].Namespace = "Bad" },
			want:   []string{"name: Required value", `variants[0].components[0].namespace: Invalid value: "Bad"`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := artifact.LoadCatalog(testCatalog)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(c)
			err = c.Validate()
			if err == nil {
				t.Fatalf("%s: Validate() = nil, want an error with %q (%s)", tc.name, tc.want, tc.reason)
			}
			rest := err.Error()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("%s: Validate() = %v\nwant it to contain, in order, %q (%s)", tc.name, err, tc.want, tc.reason)
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
