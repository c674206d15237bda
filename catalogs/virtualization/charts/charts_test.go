package charts_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/schemas"
	"cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/charttest"
	"cozystack.io/sdk/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

// apps are the application charts (the chart directories with value
// cases under testdata/cases): all 4 of them.
func apps(t *testing.T) []string { return charttest.Apps(t, charttest.CasesDir, 4) }

func cases(t *testing.T) []charttest.Case { return charttest.Cases(t, charttest.CasesDir, 4) }

func TestGolden(t *testing.T) {
	charttest.RunGolden(t, ".", cases(t), charttest.GoldenDir, *update)
}

// upstreamCRDs are the CRD files of ../shared/crds/upstream the charts'
// kinds need.
var upstreamCRDs = []string{
	"kubevirt.io_virtualmachines.yaml", "kubevirt.io_virtualmachineinstances.yaml",
	"cdi.kubevirt.io_datavolumes.yaml", "capi-core.yaml", "kamaji.yaml", "piraeus.yaml",
}

// installCRDs installs the upstream CRDs, for the kinds upstream lacks
// those of the operator charts, and the backups.cozystack.io CRDs; once per
// package.
func installCRDs(t *testing.T, ctx context.Context) {
	t.Helper()
	crdsOnce.Do(func() {
		var files []string
		for _, f := range upstreamCRDs {
			files = append(files, filepath.Join(testenv.SharedDir(t), "crds", "upstream", f))
		}
		var names []string
		names, crdsErr = charttest.InstallCRDs(ctx, env.Config, files, operators(t))
		t.Logf("CRDs from the operator charts (upstream has none of them): %v", names)
		// The backup driver's chart renders a BackupClass
		// (backups.cozystack.io, cluster-scoped).
		if crdsErr == nil {
			if err := crds.Apply(ctx, env.Config); err != nil {
				crdsErr = fmt.Errorf("install the backups.cozystack.io CRDs: %w", err)
			}
		}
	})
	if crdsErr != nil {
		t.Fatal(crdsErr)
	}
}

var (
	crdsOnce sync.Once
	crdsErr  error
)

func TestDryRun(t *testing.T) {
	testenv.Need(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	installCRDs(t, ctx)
	charttest.RunDryRun(t, ctx, env.Config, ".", cases(t))
}

func TestLint(t *testing.T) { charttest.RunLint(t, ".", cases(t)) }

func TestSchemaStrict(t *testing.T) { charttest.RunSchemaStrict(t, ".", apps(t)) }

// No string a tenant writes adds an object to a release: every string
// field and map key of each values schema, set to payloads that start a
// new manifest, leaves the release's objects as they were, with and
// without the schema's validation.
func TestInjection(t *testing.T) { charttest.RunInjection(t, ".", cases(t)) }

// operators are the operator charts: the chart directories without value
// cases.
func operators(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("*", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	isApp := map[string]bool{}
	for _, a := range apps(t) {
		isApp[a] = true
	}
	var ops []string
	for _, d := range dirs {
		if name := filepath.Dir(d); !isApp[name] {
			ops = append(ops, name)
		}
	}
	if len(ops) < 7 {
		t.Fatalf("operator charts %v, want KubeVirt, CDI, Cluster API, its KubeVirt and Talos providers, Kamaji and Piraeus", ops)
	}
	return ops
}

// The operator charts render with their defaults, lint clean, and their
// objects pass a strict server-side dry-run; the CRDs they ship (crds/,
// when synced) are CustomResourceDefinitions.
func TestOperators(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var cfg *rest.Config
	if env != nil {
		cfg = env.Config
		installCRDs(t, ctx)
		// The namespace RunOperators dry-runs into (TestDryRun creates it
		// too): the test also runs alone.
		createNamespace(t, ctx)
	}
	charttest.RunOperators(t, ctx, cfg, ".", operators(t))
}

// The charts refuse what their schemas cannot express, with a message
// naming the problem.
func TestRenderErrors(t *testing.T) {
	tests := []struct {
		app    string
		values map[string]any
		want   string
	}{
		{"vm-instance", map[string]any{"resources": map[string]any{"cpu": 2}}, "set instanceType to"},
		{"kubernetes", map[string]any{"nodeGroups": map[string]any{"md0": map[string]any{"minReplicas": 5, "maxReplicas": 2}}}, "maxReplicas 2 is below minReplicas 5"},
		{"vpc", map[string]any{"subnets": []any{map[string]any{"name": "a", "cidr": "10.0.0.0/24"}, map[string]any{"name": "a", "cidr": "10.0.1.0/24"}}}, "subnet a is listed twice"},
		{"vm-disk", map[string]any{"source": map[string]any{"http": map[string]any{"url": "https://x"}, "blank": map[string]any{}}}, "maxProperties"},
	}
	for _, tt := range tests {
		t.Run(tt.app, func(t *testing.T) {
			ch, err := charttest.Load(tt.app)
			if err != nil {
				t.Fatal(err)
			}
			_, err = charttest.Render(ch, tt.app+"-bad", charttest.WithK2(tt.values))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("render: %v, want an error with %q", err, tt.want)
			}
		})
	}
	// Without the tenant's host, the kubernetes chart names the K2 key.
	ch, err := charttest.Load("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	values := charttest.WithK2(nil)
	values["_namespace"] = map[string]any{}
	if _, err := charttest.Render(ch, "kubernetes-nohost", values); err == nil || !strings.Contains(err.Error(), "_namespace.host") {
		t.Errorf("render without _namespace.host: %v, want an error naming it", err)
	}
}

// includeRE finds the templates a chart includes by name.
var includeRE = regexp.MustCompile(`(?:include|template)\s+"(cozy-lib\.[^"]+)"`)

// Only the public helpers of cozy-lib (K5, k5-cozy-lib.json) are used.
func TestPublicHelpers(t *testing.T) {
	data, err := fs.ReadFile(schemas.FS(), "v1alpha1/k5-cozy-lib.json")
	if err != nil {
		t.Fatal(err)
	}
	var k5 struct {
		Helpers []struct{ Name string } `json:"helpers"`
	}
	if err := json.Unmarshal(data, &k5); err != nil {
		t.Fatal(err)
	}
	public := map[string]bool{}
	for _, h := range k5.Helpers {
		public[h.Name] = true
	}
	files, err := filepath.Glob(filepath.Join("*", "templates", "*"))
	if err != nil {
		t.Fatal(err)
	}
	used := 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range includeRE.FindAllStringSubmatch(string(text), -1) {
			used++
			if !public[m[1]] {
				t.Errorf("%s includes %s, which is not a public helper of cozy-lib (contracts/schemas/v1alpha1/k5-cozy-lib.json)", f, m[1])
			}
		}
	}
	if used == 0 {
		t.Error("no chart uses cozy-lib")
	}
}

// A tenant with its own etcd (_namespace.etcd) keeps its clusters' data
// there: the DataStore named after the etcd's namespace.
func TestKubernetesDataStore(t *testing.T) {
	ch, err := charttest.Load("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	values := charttest.WithK2(nil)
	values["_namespace"] = map[string]any{"host": "test.example.org", "etcd": "tenant-test"}
	out, err := charttest.Render(ch, "kubernetes-etcd", values)
	if err != nil {
		t.Fatal(err)
	}
	if m := charttest.Manifest(out); !strings.Contains(m, "\n  dataStore: \"tenant-test\"\n") {
		t.Errorf("no dataStore: tenant-test in:\n%s", m)
	}
}

// createNamespace creates charttest.Namespace unless it exists.
func createNamespace(t *testing.T, ctx context.Context) {
	t.Helper()
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: charttest.Namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
