package conformancetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cozystack.io/contracts/conformance"
	"cozystack.io/platform/internal/apiserver/apiservertest"
	"cozystack.io/sdk/localcp"
	"cozystack.io/sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

func repoPath(t *testing.T, elem ...string) string {
	t.Helper()
	root, ok := localcp.RepoRoot()
	if !ok {
		t.Fatal("the repository root is not above the working directory")
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// Both catalogs, and the suite's own test catalog, pass the live checks:
// every AD is served, and an object of each kind built from its defaults
// is created, read back, stored as its HelmRelease and deleted.
func TestLiveCatalogs(t *testing.T) {
	apiservertest.Start(t, env)
	for _, dir := range [][]string{
		{"catalogs", "services"},
		{"catalogs", "virtualization"},
		{"contracts", "conformance", "testdata", "catalog"},
	} {
		t.Run(filepath.Join(dir...), func(t *testing.T) {
			src, err := conformance.LoadDir(repoPath(t, dir...))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			start := time.Now()
			findings, err := conformance.Live(ctx, env.Config, src, conformance.LiveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				t.Errorf("%s", f)
			}
			t.Logf("%d kinds checked live in %s", len(src.ADs), time.Since(start).Round(time.Millisecond))
		})
	}
}

// Each seeded live violation is found with its rule, at its file.
func TestLiveSeededViolations(t *testing.T) {
	apiservertest.Start(t, env)
	dir := repoPath(t, "contracts", "conformance", "testdata", "live")
	for _, rule := range []string{"LIVE-install", "LIVE-served", "LIVE-create"} {
		t.Run(rule, func(t *testing.T) {
			file := filepath.Join(dir, rule+".yaml")
			src, err := conformance.LoadADFiles(dir, []string{file})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			findings, err := conformance.Live(ctx, env.Config, src, conformance.LiveOptions{Timeout: 15 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if len(findings) != 1 || findings[0].RuleID != rule || findings[0].File != rule+".yaml" || findings[0].Fix == "" {
				t.Fatalf("findings %v, want one %s in %s.yaml", findings, rule, rule)
			}
			t.Logf("%s", findings[0])
		})
	}
}
