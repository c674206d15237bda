package charttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Namespace is the tenant namespace the tests render and dry-run into.
const Namespace = "tenant-test"

// K2Values returns the `_cluster` and `_namespace` objects as
// cozystack-controller projects them into Namespace with a ClusterValues
// holding only required fields and defaults (contracts/conformance keeps
// the same _cluster for its rendering; a test there keeps both equal).
// Each call returns a fresh copy.
func K2Values() map[string]any {
	return map[string]any{
		"_cluster": map[string]any{
			"root-host":                          "example.org",
			"api-server-endpoint":                "https://api.example.org:6443",
			"cluster-domain":                     "cozy.local",
			"expose-ingress":                     "tenant-root",
			"issuer-name":                        "letsencrypt-prod",
			"clusterissuer":                      "http01",
			"oidc-enabled":                       "false",
			"gateway-api":                        "false",
			"gateway-class-name":                 "cilium",
			"cpu-allocation-ratio":               "10",
			"memory-allocation-ratio":            "1",
			"ephemeral-storage-allocation-ratio": "40",
		},
		"_namespace": map[string]any{"host": "test.example.org"},
	}
}

// WithK2 returns values (a tenant's spec; nil is empty) with K2Values
// added, as the HelmRelease's valuesFrom adds them. values is not changed.
func WithK2(values map[string]any) map[string]any {
	out := maps.Clone(values)
	if out == nil {
		out = map[string]any{}
	}
	maps.Copy(out, K2Values())
	return out
}

// Load loads a chart directory with its vendored dependencies. Render
// changes the chart it is given, so load a fresh one to render again with
// other values.
func Load(dir string) (*chart.Chart, error) { return loader.LoadDir(dir) }

// Render renders c as release name in Namespace with values, validating the
// merged values against the chart's values.schema.json as Helm does on
// install. It returns the manifests by template path.
func Render(c *chart.Chart, name string, values map[string]any) (map[string]string, error) {
	if err := chartutil.ProcessDependenciesWithMerge(c, values); err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValues(c, values, chartutil.ReleaseOptions{Name: name, Namespace: Namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(c, vals)
}

// RenderUnvalidated is Render without the values.schema.json validation:
// what the templates themselves make of values the schema would refuse.
func RenderUnvalidated(c *chart.Chart, name string, values map[string]any) (map[string]string, error) {
	if err := chartutil.ProcessDependenciesWithMerge(c, values); err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValuesWithSchemaValidation(c, values, chartutil.ReleaseOptions{Name: name, Namespace: Namespace, IsInstall: true}, chartutil.DefaultCapabilities, true)
	if err != nil {
		return nil, err
	}
	return engine.Render(c, vals)
}

// generated matches the passwords charts generate (randAlphaNum 32), which
// change at every render; digests matches SHA-256 sums in hex, which are
// of such passwords (checksum annotations, password hashes).
var (
	generated = regexp.MustCompile(`\b[A-Za-z0-9]{32}\b`)
	digests   = regexp.MustCompile(`\b[a-f0-9]{64}\b`)
)

// Manifest joins the non-empty manifests of a render in template-path
// order, each headed by "# Source: <path>", leaving out helper templates
// (.tpl), with SHA-256 sums replaced by <sha256> and generated passwords
// (32 letters and digits) by <generated>: the stable text golden files
// hold.
func Manifest(out map[string]string) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(out)) {
		text := strings.TrimSpace(out[name])
		if text == "" || strings.HasSuffix(name, ".tpl") {
			continue
		}
		b.WriteString("# Source: " + name + "\n" + text + "\n")
	}
	return generated.ReplaceAllString(digests.ReplaceAllString(b.String(), "<sha256>"), "<generated>")
}

// Objects decodes every non-empty YAML document of a render, in
// template-path order.
func Objects(out map[string]string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, name := range slices.Sorted(maps.Keys(out)) {
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(out[name])), 4096)
		for {
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if len(m) == 0 {
				continue
			}
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs, nil
}

// ReadValues decodes a YAML values file; nil or empty data gives an empty
// map.
func ReadValues(data []byte) (map[string]any, error) {
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// Refusal is one row of RunRefusals: values that chart App's values
// schema must refuse, and substrings the error must hold (the field and
// the bound, so the message tells a person what to fix).
type Refusal struct {
	Name   string
	App    string
	Values map[string]any
	Want   []string
}

// RunRefusals renders, for each refusal, the chart in directory App (with
// the K2 values, WithK2) and fails the subtest when it renders or when its
// error lacks one of Want: the table a catalog's bounds tests share
// (contract K4, k4-values.md, K4-unbounded).
func RunRefusals(t *testing.T, refusals []Refusal) {
	t.Helper()
	for _, r := range refusals {
		t.Run(r.Name, func(t *testing.T) {
			ch, err := Load(r.App)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Render(ch, r.App+"-big", WithK2(r.Values))
			if err == nil {
				t.Fatalf("%s rendered; want its values schema to refuse it", r.Name)
			}
			for _, s := range r.Want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}
