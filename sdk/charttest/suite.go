package charttest

// The tests every catalog runs on its charts, shared here because a
// catalog may not import another's code: value cases, golden files, a
// strict server-side dry-run, Helm's linter, the K4 strictness of values
// schemas, the operator charts, and the operator charts' synced CRDs. Each
// Run function runs one subtest per chart or case, as a catalog's own
// test did.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/crdsync"
	"cozystack.io/sdk/testenv"
)

// CasesDir and GoldenDir are where a catalog's charts directory keeps its
// value cases (<CasesDir>/<chart>/<case>.yaml) and the golden renders of
// them (<GoldenDir>/<chart>/<case>.yaml).
const (
	CasesDir  = "testdata/cases"
	GoldenDir = "testdata/golden"
)

// Case is one value combination of one application chart: the values file
// <casesDir>/<App>/<Name>.yaml, a tenant's spec.
type Case struct {
	App, Name string
	Values    map[string]any
}

// Apps returns the application charts: the directories of casesDir (each
// a chart's value cases). Fewer than minApps fails t.
func Apps(t *testing.T, casesDir string, minApps int) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(casesDir, "*"))
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

// Cases reads the value cases of every application chart (Apps); a chart
// with fewer than 2 cases is an error.
func Cases(t *testing.T, casesDir string, minApps int) []Case {
	t.Helper()
	var out []Case
	for _, app := range Apps(t, casesDir, minApps) {
		files, err := filepath.Glob(filepath.Join(casesDir, app, "*.yaml"))
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
			values, err := ReadValues(data)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out = append(out, Case{App: app, Name: strings.TrimSuffix(filepath.Base(f), ".yaml"), Values: values})
		}
	}
	return out
}

// RenderCase renders c's chart (chartsDir/<App>) as release <App>-<Name>
// with the K2 values added.
func RenderCase(t *testing.T, chartsDir string, c Case) map[string]string {
	t.Helper()
	ch, err := Load(filepath.Join(chartsDir, c.App))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(ch, c.App+"-"+c.Name, WithK2(c.Values))
	if err != nil {
		t.Fatalf("render %s/%s: %v", c.App, c.Name, err)
	}
	return out
}

// RunGolden renders every case and compares its Manifest with
// goldenDir/<App>/<Name>.yaml; with update it rewrites the file instead.
func RunGolden(t *testing.T, chartsDir string, cases []Case, goldenDir string, update bool) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.App+"/"+c.Name, func(t *testing.T) {
			got := Manifest(RenderCase(t, chartsDir, c))
			path := filepath.Join(goldenDir, c.App, c.Name+".yaml")
			if update {
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
				t.Errorf("%s differs (go test -update to accept):\n%s", path, LineDiff(string(want), got))
			}
		})
	}
}

// RunDryRun creates Namespace and then every object each case renders,
// in Namespace, with server-side dry-run and strict field validation (an
// unknown or duplicate field is an error, not a warning). The CRDs of the
// objects' kinds must be installed already.
func RunDryRun(t *testing.T, ctx context.Context, cfg *rest.Config, chartsDir string, cases []Case) {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, vc := range cases {
		t.Run(vc.App+"/"+vc.Name, func(t *testing.T) {
			objs, err := Objects(RenderCase(t, chartsDir, vc))
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) == 0 {
				t.Fatal("the chart rendered no objects")
			}
			for _, o := range objs {
				o.SetNamespace(Namespace)
				if err := c.Create(ctx, o, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
					t.Errorf("%s %s: %v", o.GetKind(), o.GetName(), err)
				}
			}
		})
	}
}

// RunLint runs Helm's linter on every case; anything above info fails.
func RunLint(t *testing.T, chartsDir string, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.App+"/"+c.Name, func(t *testing.T) {
			res := lint.All(filepath.Join(chartsDir, c.App), WithK2(c.Values), Namespace, false)
			for _, m := range res.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint: %v", m)
				}
			}
		})
	}
}

// RunSchemaStrict checks that the values schema of every app rejects an
// unknown key at every object level (K4): no StrictnessViolations,
// values.yaml validates, and an UnknownKey at each StrictPaths is refused
// both by santhosh-tekuri/jsonschema (draft 2020-12) and by Helm on render.
func RunSchemaStrict(t *testing.T, chartsDir string, apps []string) {
	t.Helper()
	for _, app := range apps {
		t.Run(app, func(t *testing.T) {
			dir := filepath.Join(chartsDir, app)
			data, err := os.ReadFile(filepath.Join(dir, "values.schema.json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			if v := StrictnessViolations(doc); len(v) > 0 {
				t.Errorf("objects accepting unknown keys (want additionalProperties: false, or a map's item schema): %v", v)
			}
			schema := compileSchema(t, data)
			ch, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			defaults := ch.Values
			if err := schema.Validate(toJSON(t, WithK2(defaults))); err != nil {
				t.Fatalf("values.yaml does not validate: %v", err)
			}
			paths := StrictPaths(doc)
			if len(paths) < 2 {
				t.Fatalf("strict objects %v: want the root and at least one nested object", paths)
			}
			for _, p := range paths {
				bad := WithUnknownKey(WithK2(defaults), p)
				if err := schema.Validate(toJSON(t, bad)); err == nil || !strings.Contains(err.Error(), UnknownKey) {
					t.Errorf("jsonschema: an unknown key at %s: err = %v, want one naming %s", PathString(p), err, UnknownKey)
				}
				fresh, err := Load(dir)
				if err != nil {
					t.Fatal(err)
				}
				_, err = Render(fresh, app+"-strict", WithUnknownKey(WithK2(nil), p))
				if err == nil || !strings.Contains(err.Error(), UnknownKey) {
					t.Errorf("helm: an unknown key at %s: err = %v, want one naming %s", PathString(p), err, UnknownKey)
				}
			}
		})
	}
}

// RunOperators checks the operator charts (chartsDir/<op>): they render
// with their defaults and lint clean (as release <op> in cozy-<op>), the
// CRDs they ship (crds/, when synced) are CustomResourceDefinitions, and,
// when cfg is not nil, their objects pass a strict server-side dry-run
// (namespaced ones in Namespace). cfg is nil without a control plane
// (-short); the CRDs of the objects' kinds must be installed already.
func RunOperators(t *testing.T, ctx context.Context, cfg *rest.Config, chartsDir string, ops []string) {
	t.Helper()
	var c client.Client
	if cfg != nil {
		var err error
		if c, err = client.New(cfg, client.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range ops {
		t.Run(op, func(t *testing.T) {
			dir := filepath.Join(chartsDir, op)
			ch, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, crd := range ch.CRDObjects() {
				if !strings.Contains(string(crd.File.Data), "kind: CustomResourceDefinition") {
					t.Errorf("%s is not a CustomResourceDefinition", crd.Filename)
				}
			}
			out, err := Render(ch, op, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range lint.All(dir, nil, "cozy-"+op, false).Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint: %v", m)
				}
			}
			if c == nil {
				return // -short: no control plane
			}
			objs, err := Objects(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				namespaced, err := c.IsObjectNamespaced(o)
				if err != nil {
					t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
				}
				if namespaced {
					o.SetNamespace(Namespace)
				}
				if err := c.Create(ctx, o, client.DryRunAll, client.FieldValidation("Strict")); err != nil {
					t.Errorf("%s %s: %v", o.GetKind(), o.GetName(), err)
				}
			}
		})
	}
}

// CheckOperatorCRDs checks that the CRDs committed in catalogDir are what
// its crds.yaml's sources give: the Go module ones always; the mirror ones
// with ../shared/crds/upstream as the mirror, written to a temporary copy
// (they are not committed).
func CheckOperatorCRDs(t *testing.T, catalogDir string) {
	t.Helper()
	sources, err := crdsync.Load(catalogDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	files, skipped, err := crdsync.Resolve(ctx, catalogDir, sources, crdsync.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 || len(skipped) == 0 {
		t.Fatalf("%d module files and %d mirror sources, want both", len(files), len(skipped))
	}
	if err := crdsync.Check(catalogDir, files); err != nil {
		t.Error(err)
	}

	mirror := filepath.Join(testenv.SharedDir(t), "crds", "upstream")
	all, skipped, err := crdsync.Resolve(ctx, catalogDir, sources, crdsync.Options{Mirror: mirror})
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 0 {
		t.Errorf("skipped %v with a mirror", skipped)
	}
	dir := t.TempDir()
	if err := crdsync.Write(dir, all); err != nil {
		t.Fatal(err)
	}
	if err := crdsync.Check(dir, all); err != nil {
		t.Error(err)
	}
}

// compileSchema compiles a values schema as JSON Schema draft 2020-12.
func compileSchema(t *testing.T, data []byte) *jsonschema.Schema {
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

// LineDiff shows the first differing lines of two texts, with some lines
// of got around the first difference.
func LineDiff(want, got string) string {
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
