// Tests of the application charts of the services catalog. Each chart has
// value cases in testdata/cases/<chart>/<case>.yaml (a tenant's spec; the
// K2 cluster values are added as valuesFrom adds them):
//
//   - TestGolden renders every case to testdata/golden/<chart>/<case>.yaml
//     (go test -update rewrites them);
//   - TestDryRun creates every rendered object with server-side dry-run and
//     strict field validation on the local control plane, after installing
//     the upstream CRDs from ../shared/crds/upstream;
//   - TestLint runs Helm's linter on every chart;
//   - TestSchemaStrict checks that every values schema rejects an unknown
//     key at every object level (K4), with santhosh-tekuri/jsonschema and
//     with Helm's own validation on render.
package charts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/charttest"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// minApps is the number of application charts the catalog has.
var minApps = 8

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

// apps are the application charts: the chart directories with value cases.
func apps(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "cases", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range dirs {
		names = append(names, filepath.Base(d))
	}
	if len(names) < minApps {
		t.Fatalf("value cases for %d charts (%v), want every application chart", len(names), names)
	}
	return names
}

// valueCase is one value combination of one chart.
type valueCase struct {
	app, name string
	values    map[string]any
}

func cases(t *testing.T) []valueCase {
	t.Helper()
	var out []valueCase
	for _, app := range apps(t) {
		files, err := filepath.Glob(filepath.Join("testdata", "cases", app, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) < 2 {
			t.Errorf("%s has %d value cases, want at least 2", app, len(files))
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			values, err := charttest.ReadValues(data)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out = append(out, valueCase{app: app, name: strings.TrimSuffix(filepath.Base(f), ".yaml"), values: values})
		}
	}
	return out
}

// render renders one case as release <app>-<case>.
func render(t *testing.T, c valueCase) map[string]string {
	t.Helper()
	ch, err := charttest.Load(c.app)
	if err != nil {
		t.Fatal(err)
	}
	out, err := charttest.Render(ch, c.app+"-"+c.name, charttest.WithK2(c.values))
	if err != nil {
		t.Fatalf("render %s/%s: %v", c.app, c.name, err)
	}
	return out
}

func TestGolden(t *testing.T) {
	for _, c := range cases(t) {
		t.Run(c.app+"/"+c.name, func(t *testing.T) {
			got := charttest.Manifest(render(t, c))
			path := filepath.Join("testdata", "golden", c.app, c.name+".yaml")
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
				t.Fatalf("%v (go test -update creates it)", err)
			}
			if string(want) != got {
				t.Errorf("%s differs (go test -update to accept):\n%s", path, lineDiff(string(want), got))
			}
		})
	}
}

// upstreamCRDs are the CRD files of ../shared/crds/upstream the charts'
// kinds need.
var upstreamCRDs = []string{
	"cnpg.yaml", "mariadb.yaml", "psmdb.yaml", "redis-failover.yaml",
	"strimzi-kafka.yaml", "strimzi-kafkanodepool.yaml", "strimzi-kafkatopic.yaml",
}

func TestDryRun(t *testing.T) {
	testenv.Need(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var files []string
	for _, f := range upstreamCRDs {
		files = append(files, filepath.Join(testenv.SharedDir(t), "crds", "upstream", f))
	}
	if err := localcp.ApplyCRDFiles(ctx, env.Config, files...); err != nil {
		t.Fatalf("install the upstream CRDs: %v", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: charttest.Namespace}}
	if err := env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, vc := range cases(t) {
		t.Run(vc.app+"/"+vc.name, func(t *testing.T) {
			objs, err := charttest.Objects(render(t, vc))
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) == 0 {
				t.Fatal("the chart rendered no objects")
			}
			for _, o := range objs {
				o.SetNamespace(charttest.Namespace)
				// Strict: an unknown or duplicate field is an error, not a warning.
				if err := c.Create(ctx, o, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
					t.Errorf("%s %s: %v", o.GetKind(), o.GetName(), err)
				}
			}
		})
	}
}

func TestLint(t *testing.T) {
	for _, c := range cases(t) {
		t.Run(c.app+"/"+c.name, func(t *testing.T) {
			res := lint.All(c.app, charttest.WithK2(c.values), charttest.Namespace, false)
			for _, m := range res.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint: %v", m)
				}
			}
		})
	}
}

func TestSchemaStrict(t *testing.T) {
	for _, app := range apps(t) {
		t.Run(app, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(app, "values.schema.json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			if v := charttest.StrictnessViolations(doc); len(v) > 0 {
				t.Errorf("objects accepting unknown keys (want additionalProperties: false, or a map's item schema): %v", v)
			}
			schema := compile(t, data)
			ch, err := charttest.Load(app)
			if err != nil {
				t.Fatal(err)
			}
			defaults := ch.Values
			if err := schema.Validate(toJSON(t, charttest.WithK2(defaults))); err != nil {
				t.Fatalf("values.yaml does not validate: %v", err)
			}
			paths := charttest.StrictPaths(doc)
			if len(paths) < 2 {
				t.Fatalf("strict objects %v: want the root and at least one nested object", paths)
			}
			for _, p := range paths {
				bad := charttest.WithUnknownKey(charttest.WithK2(defaults), p)
				if err := schema.Validate(toJSON(t, bad)); err == nil || !strings.Contains(err.Error(), charttest.UnknownKey) {
					t.Errorf("jsonschema: an unknown key at %s: err = %v, want one naming %s", charttest.PathString(p), err, charttest.UnknownKey)
				}
				fresh, err := charttest.Load(app)
				if err != nil {
					t.Fatal(err)
				}
				_, err = charttest.Render(fresh, app+"-strict", charttest.WithUnknownKey(charttest.WithK2(nil), p))
				if err == nil || !strings.Contains(err.Error(), charttest.UnknownKey) {
					t.Errorf("helm: an unknown key at %s: err = %v, want one naming %s", charttest.PathString(p), err, charttest.UnknownKey)
				}
			}
		})
	}
}

// compile compiles a values schema as JSON Schema draft 2020-12.
func compile(t *testing.T, data []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("values.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// toJSON turns YAML-decoded values into what jsonschema validates.
func toJSON(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lineDiff shows the first differing lines of two texts.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			lo, hi := max(0, i-3), min(len(g), i+4)
			return "first difference at line " + strconv.Itoa(i+1) + ":\n- " + a + "\n+ " + b + "\ncontext (got):\n" + strings.Join(g[lo:hi], "\n")
		}
	}
	return "(no line differs)"
}

// operators are the operator charts: charts/*-operator.
func operators(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("*-operator")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 5 {
		t.Fatalf("operator charts %v, want the five operators", dirs)
	}
	return dirs
}

// The operator charts render with their defaults, lint clean, and their
// objects pass a strict server-side dry-run; the CRDs they ship (crds/,
// when synced) are CustomResourceDefinitions.
func TestOperators(t *testing.T) {
	var c client.Client
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if env != nil {
		var err error
		if c, err = client.New(env.Config, client.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range operators(t) {
		t.Run(op, func(t *testing.T) {
			ch, err := charttest.Load(op)
			if err != nil {
				t.Fatal(err)
			}
			for _, crd := range ch.CRDObjects() {
				if !strings.Contains(string(crd.File.Data), "kind: CustomResourceDefinition") {
					t.Errorf("%s is not a CustomResourceDefinition", crd.Filename)
				}
			}
			out, err := charttest.Render(ch, op, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range lint.All(op, nil, "cozy-"+op, false).Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint: %v", m)
				}
			}
			if c == nil {
				return // -short: no control plane
			}
			objs, err := charttest.Objects(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				namespaced, err := c.IsObjectNamespaced(o)
				if err != nil {
					t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
				}
				if namespaced {
					o.SetNamespace(charttest.Namespace)
				}
				if err := c.Create(ctx, o, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
					t.Errorf("%s %s: %v", o.GetKind(), o.GetName(), err)
				}
			}
		})
	}
}
