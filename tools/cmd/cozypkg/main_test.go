package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/artifact"
	"cozystack.io/sdk/testenv"
)

// The CNCF Distribution registry of a local control plane; nil under -short.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Registry: true}, &env))
}

// testCatalog is the contracts module's test catalog: two charts and a
// library.
var testCatalog = filepath.Join("..", "..", "..", "contracts", "artifact", "testdata", "catalog")

var digestLine = regexp.MustCompile(`(?m)^Digest: (sha256:[0-9a-f]{64})$`)

// run executes cozypkg with args as main would, and returns its stdout and
// stderr.
func run(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := newRoot()
	var stdout, stderr bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return stdout.String(), stderr.String(), err
}

func mustRun(t *testing.T, args ...string) (string, string) {
	t.Helper()
	stdout, stderr, err := run(t, "", args...)
	if err != nil {
		t.Fatalf("cozypkg %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr)
	}
	return stdout, stderr
}

// wantProgress checks that stderr reports state for the manifest, the
// config and every chart.
func wantProgress(t *testing.T, stderr string, states ...string) {
	t.Helper()
	for _, blob := range []string{"manifest", "config", "chart charts/echo ", "chart charts/echo-operator", "chart charts/echo-tenant"} {
		for _, state := range states {
			if !regexp.MustCompile(`(?m)^` + state + ` +sha256:[0-9a-f]{12}  ` + regexp.QuoteMeta(blob)).MatchString(stderr) {
				t.Errorf("stderr has no %q line for %s:\n%s", state, blob, stderr)
			}
		}
	}
}

// wantUnchanged checks that stderr reports the whole artifact as present:
// one "exists" line for the manifest and no upload.
func wantUnchanged(t *testing.T, stderr string) {
	t.Helper()
	if strings.Contains(stderr, "uploading") || !regexp.MustCompile(`^exists +sha256:[0-9a-f]{12}  manifest .*\n$`).MatchString(stderr) {
		t.Errorf("copying an artifact the target has: stderr\n%s\nwant exactly one exists line for the manifest", stderr)
	}
}

func TestBuildIntoLayout(t *testing.T) {
	layout := filepath.Join(t.TempDir(), "demo")
	stdout, stderr := mustRun(t, "build", testCatalog, "--oci-layout", layout)
	if !strings.HasPrefix(stdout, "Built "+layout+":0.1.0\n") {
		t.Errorf("stdout = %q, want Built %s:0.1.0", stdout, layout)
	}
	m := digestLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("stdout has no digest line: %q", stdout)
	}
	wantProgress(t, stderr, "uploading", "done")
	if _, err := os.Stat(filepath.Join(layout, "oci-layout")); err != nil {
		t.Errorf("no OCI layout at %s: %v", layout, err)
	}

	// Again: same digest, nothing new written.
	again, stderr := mustRun(t, "build", testCatalog, "--oci-layout", layout)
	if d := digestLine.FindStringSubmatch(again); d == nil || d[1] != m[1] {
		t.Errorf("second build printed %q, want digest %s", again, m[1])
	}
	wantUnchanged(t, stderr)
}

func TestBuildDefaultLayoutAsJSON(t *testing.T) {
	catalog, err := filepath.Abs(testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	stdout, _ := mustRun(t, "build", catalog, "--tag", "dev", "-o", "json")
	var got result
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("-o json printed %q: %v", stdout, err)
	}
	if got.Reference != filepath.Join("dist", "demo")+":dev" || got.Catalog != "demo" || got.Version != "0.1.0" || len(got.Charts) != 3 {
		t.Errorf("summary = %+v, want dist/demo:dev, catalog demo 0.1.0, 3 charts", got)
	}
	size := int64(0)
	for _, c := range got.Charts {
		if c.Size <= 0 || !strings.HasPrefix(c.Digest, "sha256:") || c.Name == "" {
			t.Errorf("chart %+v", c)
		}
		size += c.Size
	}
	if got.Size <= size {
		t.Errorf("size %d does not count the manifest and config beside the charts (%d)", got.Size, size)
	}
	if _, err := os.Stat(filepath.Join("dist", "demo", "index.json")); err != nil {
		t.Errorf("the default layout dist/demo was not written: %v", err)
	}
}

func TestPushCatalogDirectory(t *testing.T) {
	testenv.Need(t, env)
	dest := env.RegistryHost() + "/catalogs/cli"
	stdout, stderr := mustRun(t, "push", testCatalog, dest, "--plain-http")
	if !strings.HasPrefix(stdout, "Pushed "+dest+":0.1.0\n") {
		t.Errorf("stdout = %q, want Pushed %s:0.1.0", stdout, dest)
	}
	m := digestLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no digest in %q", stdout)
	}
	wantProgress(t, stderr, "uploading", "done")

	// What the registry holds is the artifact the platform accepts.
	repo, tag, err := artifact.NewRepository(dest+":0.1.0", artifact.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := artifact.Pull(t.Context(), repo, tag, nil, artifact.PullOptions{})
	if err != nil {
		t.Fatalf("pull back: %v", err)
	}
	if a.Manifest.Digest.String() != m[1] {
		t.Errorf("registry has %s, cozypkg printed %s", a.Manifest.Digest, m[1])
	}

	// Pushing again uploads nothing.
	_, stderr = mustRun(t, "push", testCatalog, dest+":0.1.0", "--plain-http")
	wantUnchanged(t, stderr)
}

func TestPushLayout(t *testing.T) {
	testenv.Need(t, env)
	layout := filepath.Join(t.TempDir(), "demo")
	built, _ := mustRun(t, "build", testCatalog, "--oci-layout", layout, "--tag", "dev")
	want := digestLine.FindStringSubmatch(built)[1]

	dest := env.RegistryHost() + "/catalogs/from-layout:stable"
	stdout, stderr := mustRun(t, "push", layout, dest, "--plain-http", "-o", "yaml")
	var got result
	if err := yaml.UnmarshalStrict([]byte(stdout), &got); err != nil {
		t.Fatalf("-o yaml printed %q: %v", stdout, err)
	}
	if got.Reference != dest || got.Digest != want || len(got.Charts) != 3 {
		t.Errorf("summary = %+v, want %s at %s with 3 charts", got, want, dest)
	}
	wantProgress(t, stderr, "uploading", "done")

	repo, tag, err := artifact.NewRepository(dest, artifact.RemoteOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := artifact.Pull(t.Context(), repo, tag, nil, artifact.PullOptions{})
	if err != nil || a.Manifest.Digest.String() != want {
		t.Fatalf("pull %s: %v, digest %v; want %s", dest, err, a, want)
	}
}

// runExit executes cozypkg with args as main does, and returns its stdout,
// stderr and exit status.
func runExit(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := execute(ctx, args, strings.NewReader(stdin), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// Every command exits 2 on a usage error, 1 on a finding, a refusal or an
// operational failure, 0 on success (exitStatuses), and says why on
// stderr.
func TestExitCodes(t *testing.T) {
	twoTags := filepath.Join(t.TempDir(), "two")
	mustRun(t, "build", testCatalog, "--oci-layout", twoTags, "--tag", "a")
	mustRun(t, "build", testCatalog, "--oci-layout", twoTags, "--tag", "b")
	broken := filepath.Join(t.TempDir(), "broken")
	if err := os.CopyFS(broken, os.DirFS(testCatalog)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "catalog.yaml"), []byte("apiVersion: cozystack.io/v1alpha1\nkind: Catalog\nname: demo\nversion: 1.0.0\nminPlatformVersion: 0.1.0\nvariants: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	failing := copyCatalog(t, "catalog.yaml", "minPlatformVersion: 0.1.0", "minPlatformVersion: 0.2.0")
	lib := newLibFixture(t)
	tampered := lib.vendored(t)
	if err := os.WriteFile(filepath.Join(tampered, "charts", "tlib-1.0.0.tgz"), []byte("not the library"), 0o644); err != nil {
		t.Fatal(err)
	}
	unreachable := "127.0.0.1:1/catalogs/demo"
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string // in stderr
	}{
		{"help", "", []string{"--help"}, 0, ""},
		{"help on a command", "", []string{"help", "build"}, 0, ""},
		{"build", "", []string{"build", testCatalog, "--oci-layout", t.TempDir()}, 0, ""},
		{"conformance passes", "", []string{"conformance", conformanceCatalog, "--platform-version", "0.1.0"}, 0, ""},
		{"package", "", []string{"package", lib.dir, "-d", t.TempDir()}, 0, ""},
		{"vendor-lib --check", "", []string{"vendor-lib", lib.archive, lib.vendored(t), "--check"}, 0, ""},

		{"no command", "", nil, 2, "give a command: build, conformance, package, push, push-lib, vendor-lib"},
		{"unknown command", "", []string{"biuld"}, 2, `unknown command "biuld" (did you mean build?)`},
		{"unknown help topic", "", []string{"help", "biuld"}, 2, `unknown help topic "biuld"`},
		{"unknown flag", "", []string{"build", testCatalog, "--nope"}, 2, "cozypkg build: unknown flag: --nope"},
		{"unknown output format", "", []string{"build", testCatalog, "-o", "xml"}, 2, `invalid argument "xml" for "-o, --output" flag: the accepted values are table, json and yaml`},
		{"missing argument", "", []string{"build"}, 2, "cozypkg build: accepts 1 arg(s), received 0 (usage: cozypkg build <catalog-dir> [flags])"},
		{"extra argument", "", []string{"package", lib.dir, lib.dir}, 2, "accepts 1 arg(s), received 2"},
		{"push: missing argument", "", []string{"push", testCatalog}, 2, "accepts 2 arg(s)"},
		{"push to a digest", "", []string{"push", testCatalog, "127.0.0.1:1/x@sha256:" + strings.Repeat("a", 64)}, 2, "push to a tag, not a digest"},
		{"push: bad reference", "", []string{"push", testCatalog, "not a reference"}, 2, "want host[:port]/repository[:tag|@digest]"},
		{"push: password without user", "secret\n", []string{"push", testCatalog, "127.0.0.1:1/x:1", "--password-stdin"}, 2, "--password-stdin needs --username"},
		{"push-lib: a tag", "", []string{"push-lib", lib.archive, "127.0.0.1:1/charts/tlib:1.0.0"}, 2, "name the repository only"},
		{"vendor-lib: missing argument", "", []string{"vendor-lib", lib.archive}, 2, "requires at least 2 arg(s)"},
		{"conformance: no platform version", "", []string{"conformance", conformanceCatalog}, 2, "--platform-version is required"},
		{"conformance: unknown platform version", "", []string{"conformance", conformanceCatalog, "--platform-version", "9.9.0"}, 2, "no contract version is known for the release line 9.9"},
		{"conformance: two catalogs", "", []string{"conformance", conformanceCatalog, conformanceCatalog, "--platform-version", "0.1.0"}, 2, "give one catalog"},
		{"conformance: --ads with --live", "", []string{"conformance", "--ads", conformanceCatalog + "/applicationdefinitions", "--live", "--platform-version", "0.1.0"}, 2, "--live and --previous need a catalog"},
		{"conformance: bad output", "", []string{"conformance", conformanceCatalog, "--platform-version", "0.1.0", "-o", "xml"}, 2, "the accepted values are table, json and yaml"},

		{"build: invalid catalog", "", []string{"build", broken, "--oci-layout", t.TempDir()}, 1, "variants: Required value"},
		{"push: neither catalog nor layout", "", []string{"push", t.TempDir(), "127.0.0.1:1/x:1"}, 1, "neither a catalog directory"},
		{"push: layout with two tags", "", []string{"push", twoTags, "127.0.0.1:1/x:1"}, 1, "the layout has the tags a, b: choose one with --source-tag"},
		{"push: registry unreachable", "", []string{"push", testCatalog, unreachable, "--plain-http"}, 1, "push to " + unreachable},
		{"push-lib: registry unreachable", "", []string{"push-lib", lib.archive, "127.0.0.1:1/charts/tlib", "--plain-http"}, 1, "connection refused"},
		{"vendor-lib: copy differs", "", []string{"vendor-lib", lib.archive, tampered, "--check"}, 1, "differs from the packaged library"},
		{"vendor-lib: no dependent", "", []string{"vendor-lib", lib.archive, t.TempDir()}, 1, "depends on tlib"},
		{"package: not a chart", "", []string{"package", t.TempDir()}, 1, "Chart.yaml"},
		{"conformance: a finding", "", []string{"conformance", failing, "--platform-version", "0.1.0"}, 1, "does not conform to the contracts of platform 0.1.0: 1 error(s)"},
		{"conformance: not a catalog", "", []string{"conformance", t.TempDir(), "--platform-version", "0.1.0"}, 1, "neither a catalog directory"},
		{"conformance: nothing to check", "", []string{"conformance", "--ads", conformanceCatalog + "/charts", "--platform-version", "0.1.0"}, 1, "0 ApplicationDefinitions found in " + conformanceCatalog + "/charts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runExit(t, tc.stdin, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("cozypkg %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.want)
			}
			if code != 0 && !strings.HasPrefix(stderr, "error: ") && !strings.Contains(stderr, "\nerror: ") {
				t.Errorf("stderr %q has no error line", stderr)
			}
		})
	}
}

// cozypkg --help lists every exit status with its meaning (the table
// docs/catalog-author/build-and-push.md repeats: TestREADME).
func TestHelpListsExitStatuses(t *testing.T) {
	stdout, _, code := runExit(t, "", "--help")
	if code != 0 {
		t.Fatalf("--help exited %d", code)
	}
	help := strings.Join(strings.Fields(stdout), " ")
	for _, s := range exitStatuses {
		if want := fmt.Sprintf("%d %s", s.Code, s.Meaning); !strings.Contains(help, want) {
			t.Errorf("--help has no %q:\n%s", want, stdout)
		}
	}
}
