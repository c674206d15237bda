package charts_test

import (
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"sigs.k8s.io/yaml"

	"cozystack.io/sdk/charttest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const (
	libDir     = "cozy-lib"
	k5JSON     = "../../contracts/schemas/v1alpha1/k5-cozy-lib.json"
	k5Doc      = "../../contracts/schemas/v1alpha1/k5-cozy-lib.md"
	k2Schema   = "../../contracts/schemas/v1alpha1/k2-cluster-values.schema.json"
	namespace  = "tenant-acme-dev"
	internalNS = "cozy-lib.internal."
)

// goodValues are cluster values as cozystack-controller projects them
// (charttest.K2Values), in namespace's tenant, whose host is
// dev.acme.example.org.
func goodValues() map[string]any {
	v := charttest.K2Values()
	v["_namespace"] = map[string]any{"host": "dev.acme.example.org"}
	return v
}

// with returns goodValues with path (object/key) set to value, or deleted
// when value is nil.
func with(path string, value any) map[string]any {
	v := goodValues()
	object, key, nested := strings.Cut(path, "/")
	if !nested {
		if value == nil {
			delete(v, object)
		} else {
			v[object] = value
		}
		return v
	}
	m := v[object].(map[string]any)
	if value == nil {
		delete(m, key)
	} else {
		m[key] = value
	}
	return v
}

// merge returns base with the top-level keys of over set.
func merge(base, over map[string]any) map[string]any {
	maps.Copy(base, over)
	return base
}

// loadConsumer loads testdata/consumer with cozy-lib as its dependency, as
// `helm dependency build` would vendor it.
func loadConsumer(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.LoadDir("testdata/consumer")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := loader.LoadDir(libDir)
	if err != nil {
		t.Fatal(err)
	}
	c.AddDependency(lib)
	return c
}

// render renders c with values in namespace and returns the manifests
// joined in template order, or the render error.
func render(t *testing.T, c *chart.Chart, values map[string]any, ns string) (string, error) {
	t.Helper()
	if err := chartutil.ProcessDependenciesWithMerge(c, values); err != nil {
		return "", err
	}
	vals, err := chartutil.ToRenderValues(c, values, chartutil.ReleaseOptions{Name: "demo", Namespace: ns, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return "", err
	}
	out, err := engine.Render(c, vals)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(out)) {
		if strings.TrimSpace(out[name]) == "" {
			continue
		}
		b.WriteString("# " + name + "\n" + strings.TrimSpace(out[name]) + "\n---\n")
	}
	return b.String(), nil
}

func TestCozyLibRender(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		ns     string
	}{
		{name: "defaults", values: goodValues()},
		{
			name: "mirror-and-optional-keys",
			values: func() map[string]any {
				v := goodValues()
				v["_cluster"].(map[string]any)["images-registry"] = "registry.example.org/cozystack/"
				v["_cluster"].(map[string]any)["load-balancer-class"] = "metallb"
				v["_namespace"].(map[string]any)["etcd"] = "tenant-acme"
				return v
			}(),
		},
		{
			name: "explicit-resources-and-ratios",
			values: func() map[string]any {
				v := merge(goodValues(), map[string]any{
					"preset":    "2xlarge",
					"resources": map[string]any{"cpu": 3, "memory": "1.5Gi", "ephemeral-storage": ""},
					"image":     "redis:8",
					"level":     "view",
				})
				c := v["_cluster"].(map[string]any)
				c["cpu-allocation-ratio"], c["memory-allocation-ratio"], c["ephemeral-storage-allocation-ratio"] = "4", "0.5", "3"
				c["images-registry"] = "localhost:5000/mirror"
				return v
			}(),
		},
		{name: "root-tenant-nano", values: merge(goodValues(), map[string]any{"preset": "nano", "level": "super-admin"}), ns: "tenant-root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := tt.ns
			if ns == "" {
				ns = namespace
			}
			got, err := render(t, loadConsumer(t), tt.values, ns)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			golden(t, filepath.Join("testdata", "golden", tt.name+".yaml"), got)
		})
	}
}

func TestCozyLibRenderErrors(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		ns     string
		want   []string // substrings of the error
	}{
		{name: "missing required cluster key", values: with("_cluster/root-host", nil),
			want: []string{"_cluster.root-host is missing or empty", ".spec.rootHost", "ClusterValues"}},
		{name: "empty required cluster key", values: with("_cluster/root-host", ""),
			want: []string{"_cluster.root-host is missing or empty"}},
		{name: "missing ratio", values: with("_cluster/memory-allocation-ratio", nil),
			want: []string{"_cluster.memory-allocation-ratio is missing or empty", ".spec.resources.memoryAllocationRatio"}},
		{name: "bad ratio", values: with("_cluster/cpu-allocation-ratio", "0"),
			want: []string{"_cluster.cpu-allocation-ratio is \"0\"", "positive decimal"}},
		{name: "missing namespace host", values: with("_namespace/host", nil),
			want: []string{"_namespace.host is missing or empty", "namespace.cozystack.io/host"}},
		{name: "empty namespace host", values: with("_namespace/host", ""),
			want: []string{"_namespace.host is missing or empty"}},
		{name: "no cluster values at all", values: with("_cluster", nil),
			want: []string{".Values._cluster is missing", "cozystack-values"}},
		{name: "no namespace values at all", values: with("_namespace", nil),
			want: []string{".Values._namespace is missing"}},
		{name: "unknown preset", values: merge(goodValues(), map[string]any{"preset": "huge"}),
			want: []string{`unknown resources preset "huge"`}},
		{name: "bad quantity", values: merge(goodValues(), map[string]any{"resources": map[string]any{"memory": "lots"}}),
			want: []string{`memory "lots"`}},
		{name: "unknown resource", values: merge(goodValues(), map[string]any{"resources": map[string]any{"gpu": "1"}}),
			want: []string{"resources.gpu"}},
		{name: "bad image", values: merge(goodValues(), map[string]any{"image": "Not An Image"}),
			want: []string{"image reference Not An Image"}},
		{name: "unknown level", values: merge(goodValues(), map[string]any{"level": "owner"}),
			want: []string{`tenant access level "owner"`}},
		{name: "not a tenant namespace", values: goodValues(), ns: "kube-system",
			want: []string{`namespace "kube-system" is not a tenant namespace`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := tt.ns
			if ns == "" {
				ns = namespace
			}
			_, err := render(t, loadConsumer(t), tt.values, ns)
			if err == nil {
				t.Fatal("render succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

// A reader of a key K2 does not define fails: charts must read only keys
// something writes (contracts/schemas/v1alpha1/k5-cozy-lib.md,
// "Readers").
func TestCozyLibUnknownKey(t *testing.T) {
	c := loadConsumer(t)
	c.Templates = []*chart.File{{Name: "templates/bad.yaml", Data: []byte(`{{ include "cozy-lib.cluster.optional" (list "root-hostname" $) }}`)}}
	_, err := render(t, c, goodValues(), namespace)
	if err == nil || !strings.Contains(err.Error(), "_cluster.root-hostname is not a key of the cluster values") {
		t.Fatalf("err = %v, want one naming _cluster.root-hostname as unknown", err)
	}
}

// k5 is the machine-readable K5 contract.
type k5 struct {
	ContractVersion string `json:"contractVersion"`
	Library         string `json:"library"`
	Helpers         []struct {
		Name    string   `json:"name"`
		Args    []string `json:"args"`
		Returns string   `json:"returns"`
		Reads   []string `json:"reads"`
	} `json:"helpers"`
}

func readK5(t *testing.T) k5 {
	t.Helper()
	data, err := os.ReadFile(k5JSON)
	if err != nil {
		t.Fatal(err)
	}
	var doc k5
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s: %v", k5JSON, err)
	}
	return doc
}

var defineRE = regexp.MustCompile(`\{\{-?\s*define\s+"([^"]+)"`)

// definedHelpers returns every template name cozy-lib defines.
func definedHelpers(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(libDir, "templates", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range defineRE.FindAllStringSubmatch(string(data), -1) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return names
}

// The K5 helper list is exactly the helpers defined outside
// cozy-lib.internal., each documented in k5-cozy-lib.md, each reading only
// K2 keys.
func TestK5HelperList(t *testing.T) {
	doc := readK5(t)
	lib, err := loader.LoadDir(libDir)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Library != lib.Name() || doc.ContractVersion != "v1alpha1" {
		t.Errorf("k5: library %q contractVersion %q, want %q v1alpha1", doc.Library, doc.ContractVersion, lib.Name())
	}
	var public []string
	for _, name := range definedHelpers(t) {
		if !strings.HasPrefix(name, "cozy-lib.") {
			t.Errorf("cozy-lib defines %q: every name must start with cozy-lib. (public) or %s (private)", name, internalNS)
		}
		if !strings.HasPrefix(name, internalNS) {
			public = append(public, name)
		}
	}
	var listed []string
	for _, h := range doc.Helpers {
		listed = append(listed, h.Name)
	}
	slices.Sort(listed)
	if !slices.Equal(public, listed) {
		t.Errorf("public helpers of cozy-lib:\n  %v\nk5-cozy-lib.json lists:\n  %v", public, listed)
	}

	md, err := os.ReadFile(k5Doc)
	if err != nil {
		t.Fatal(err)
	}
	k2 := k2Keys(t)
	for _, h := range doc.Helpers {
		if !strings.Contains(string(md), "`"+h.Name+"`") {
			t.Errorf("k5-cozy-lib.md does not document %s", h.Name)
		}
		if len(h.Args) == 0 || h.Returns == "" {
			t.Errorf("k5-cozy-lib.json: %s lacks args or returns", h.Name)
		}
		for _, r := range h.Reads {
			if strings.HasSuffix(r, ".<KEY>") {
				continue // a generic reader: the key is its argument
			}
			if !k2[r] {
				t.Errorf("k5-cozy-lib.json: %s reads %s, which K2 does not define", h.Name, r)
			}
		}
	}
}

// k2Keys returns "_cluster.<key>" and "_namespace.<key>" for every scalar
// key of the K2 schema.
func k2Keys(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(k2Schema)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for object, o := range schema.Properties {
		for key, p := range o.Properties {
			if p.Type == "string" {
				keys[object+"."+key] = true
			}
		}
	}
	return keys
}

// cozy-lib knows who provides exactly the scalar keys of K2: no reader can
// accept a key nothing writes, and every key has a provider to name.
func TestCozyLibProvidersMatchK2(t *testing.T) {
	c := loadConsumer(t)
	c.Templates = []*chart.File{{Name: "templates/providers", Data: []byte(`{{ include "cozy-lib.internal.providers" . }}`)}}
	out, err := render(t, c, goodValues(), namespace)
	if err != nil {
		t.Fatal(err)
	}
	var providers map[string]map[string]string
	if err := yaml.Unmarshal([]byte(strings.TrimSuffix(strings.SplitN(out, "\n", 2)[1], "---\n")), &providers); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for object, keys := range providers {
		for key, provider := range keys {
			got[object+"."+key] = true
			if provider == "" {
				t.Errorf("%s.%s has no provider", object, key)
			}
		}
	}
	want := k2Keys(t)
	if !maps.Equal(got, want) {
		t.Errorf("cozy-lib providers:\n  %v\nK2 scalar keys:\n  %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
}

// helm lint finds nothing above INFO in cozy-lib and the consumer chart.
func TestCozyLibLint(t *testing.T) {
	for _, dir := range []string{libDir} {
		res := lint.All(dir, nil, namespace, false)
		for _, m := range res.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("helm lint %s: %v", dir, m)
			}
		}
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update to accept):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// tenantCases are the value cases of the tenant chart.
func tenantCases(t *testing.T) []charttest.Case { return charttest.Cases(t, charttest.CasesDir, 1) }

func TestTenantGolden(t *testing.T) {
	charttest.RunGolden(t, ".", tenantCases(t), charttest.GoldenDir, *update)
}

// No string a tenant writes into a Tenant's spec adds an object to its
// release, with and without the values schema's validation.
func TestInjection(t *testing.T) { charttest.RunInjection(t, ".", tenantCases(t)) }
