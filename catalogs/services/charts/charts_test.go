package charts_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/crds"
	"cozystack.io/sdk/charttest"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

// apps are the application charts (the chart directories with value
// cases under testdata/cases): all 8 of them.
func apps(t *testing.T) []string { return charttest.Apps(t, charttest.CasesDir, 8) }

func cases(t *testing.T) []charttest.Case { return charttest.Cases(t, charttest.CasesDir, 8) }

func TestGolden(t *testing.T) {
	charttest.RunGolden(t, ".", cases(t), charttest.GoldenDir, *update)
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
	charttest.RunDryRun(t, ctx, env.Config, ".", cases(t))
}

func TestLint(t *testing.T) { charttest.RunLint(t, ".", cases(t)) }

func TestSchemaStrict(t *testing.T) { charttest.RunSchemaStrict(t, ".", apps(t)) }

// operators are the component charts: charts/*-operator and the backup
// drivers' charts/*-backup-driver.
func operators(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("*-operator")
	if err != nil {
		t.Fatal(err)
	}
	// The backup drivers' charts are components like the operators'.
	drivers, err := filepath.Glob("*-backup-driver")
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, drivers...)
	if len(dirs) < 5 {
		t.Fatalf("operator charts %v, want the five operators", dirs)
	}
	return dirs
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
		// The backup drivers' charts render a BackupClass
		// (backups.cozystack.io, cluster-scoped).
		if err := crds.Apply(ctx, cfg); err != nil {
			t.Fatalf("install the backups.cozystack.io CRDs: %v", err)
		}
		// The namespace RunOperators dry-runs into (TestDryRun creates it
		// too): the test also runs alone.
		createNamespace(t, ctx)
	}
	charttest.RunOperators(t, ctx, cfg, ".", operators(t))
}

// No string a tenant writes adds an object to a release: every string
// field and map key of each values schema, set to payloads that start a
// new manifest, leaves the release's objects as they were, with and
// without the schema's validation.
func TestInjection(t *testing.T) { charttest.RunInjection(t, ".", cases(t)) }

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
