package build_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/content/oci"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/contracts/artifact/safetar"
)

const testCatalog = "../testdata/catalog"

// Build into an OCI layout directory, open the directory afresh, Pull:
// what comes back is what went in, and Helm loads every chart.
func TestBuildPullRoundTripInLayout(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := oci.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(ctx, testCatalog, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tag != "0.1.0" {
		t.Errorf("tag = %q, want the catalog version 0.1.0", res.Tag)
	}
	var paths []string
	for _, c := range res.Charts {
		paths = append(paths, c.Path)
	}
	if want := []string{"charts/echo", "charts/echo-operator", "charts/echo-tenant"}; !slices.Equal(paths, want) {
		t.Errorf("chart layers %v, want the components' and the application's charts, sorted: %v", paths, want)
	}
	if lib := res.Catalog.Libraries[0]; lib.Name != "demo-lib" || lib.Version != "0.1.0" {
		t.Errorf("library = %+v, want demo-lib 0.1.0 read from its Chart.yaml", lib)
	}
	if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
		t.Errorf("%s is not an OCI layout: %v", dir, err)
	}

	layout, err := oci.NewFromFS(ctx, os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	cache := memory.New()
	a, err := artifact.Pull(ctx, layout, res.Tag, cache, artifact.PullOptions{})
	if err != nil {
		t.Fatalf("Pull: %v", err)
	}
	if a.Manifest.Digest != res.Manifest.Digest || a.Manifest.ArtifactType != artifact.ArtifactType {
		t.Errorf("pulled manifest %s (%s), want %s (%s)", a.Manifest.Digest, a.Manifest.ArtifactType, res.Manifest.Digest, artifact.ArtifactType)
	}
	if a.Revision() != "0.1.0@"+res.Manifest.Digest.String() {
		t.Errorf("Revision() = %q", a.Revision())
	}
	if a.Annotations[artifact.AnnotationTitle] != "demo" || a.Annotations[artifact.AnnotationMinPlatformVersion] != "0.1.0" ||
		a.Annotations[artifact.AnnotationCreated] != "1970-01-01T00:00:00Z" {
		t.Errorf("manifest annotations = %v", a.Annotations)
	}
	if a.Catalog.Name != "demo" || len(a.Catalog.Variants) != 2 || len(a.Catalog.Applications) != 1 || a.Catalog.Libraries[0].Version != "0.1.0" {
		t.Errorf("pulled catalog = %+v", a.Catalog)
	}

	echo, ok := a.Chart("charts/echo")
	if !ok || echo.Name != "echo" || echo.Version != "0.2.0" {
		t.Fatalf("chart charts/echo = %+v, %v", echo, ok)
	}
	data, err := content.FetchAll(ctx, cache, echo.Descriptor)
	if err != nil {
		t.Fatalf("the cache lacks the chart: %v", err)
	}
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Helm cannot load the chart archive: %v", err)
	}
	deps := c.Dependencies()
	if len(deps) != 1 || deps[0].Name() != "demo-lib" || deps[0].Metadata.Type != "library" {
		t.Errorf("echo dependencies = %v, want the vendored library demo-lib", deps)
	}
	if c.Schema == nil || len(c.Templates) != 1 || c.Values["message"] != "hello" {
		t.Errorf("echo chart: schema %v, templates %d, values %v", c.Schema != nil, len(c.Templates), c.Values)
	}
	for _, f := range c.Files {
		if strings.HasSuffix(f.Name, ".draft") {
			t.Errorf("%s is in the archive although .helmignore excludes it", f.Name)
		}
	}

	// The archive unpacks safely and has Helm's layout.
	out := t.TempDir()
	if err := safetar.Unpack(bytes.NewReader(data), out, safetar.Limits{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"echo/Chart.yaml", "echo/values.schema.json", "echo/templates/configmap.yaml", "echo/charts/demo-lib/templates/_helpers.tpl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("unpacked chart lacks %s", f)
		}
	}
}

// The same directory gives the same digest; another time gives another.
func TestBuildIsReproducible(t *testing.T) {
	ctx := context.Background()
	a, err := build.Build(ctx, testCatalog, memory.New(), build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := build.Build(ctx, testCatalog, memory.New(), build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Manifest.Digest != b.Manifest.Digest {
		t.Errorf("two builds of one directory: %s and %s", a.Manifest.Digest, b.Manifest.Digest)
	}
	c, err := build.Build(ctx, testCatalog, memory.New(), build.Options{Created: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), Tag: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Manifest.Digest == a.Manifest.Digest || c.Tag != "dev" || c.Charts[0].Descriptor.Digest == a.Charts[0].Descriptor.Digest {
		t.Errorf("a build at another time has the same digests")
	}
}

func TestTagFor(t *testing.T) {
	if got := build.TagFor("1.2.3-rc.1+build.5"); got != "1.2.3-rc.1_build.5" {
		t.Errorf("TagFor = %q", got)
	}
}

// copyCatalog copies the test catalog into a temporary directory for a
// test to break.
func copyCatalog(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "catalog")
	if err := os.CopyFS(dst, os.DirFS(testCatalog)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestBuildErrors(t *testing.T) {
	write := func(t *testing.T, dir, name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		breakIt func(t *testing.T, dir string)
		opts    build.Options
		want    string
	}{
		{"invalid catalog.yaml", func(t *testing.T, dir string) {
			write(t, dir, "catalog.yaml", "apiVersion: cozystack.io/v1alpha1\nkind: Catalog\nname: demo\n")
		}, build.Options{}, "version: Required value"},
		{"missing chart directory", func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, "charts/echo-operator"))
		}, build.Options{}, "chart charts/echo-operator"},
		{"chart without Chart.yaml", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "charts/echo-operator/Chart.yaml"))
		}, build.Options{}, "Chart.yaml file is missing"},
		{"dependency neither vendored nor a library", func(t *testing.T, dir string) {
			write(t, dir, "charts/echo/Chart.yaml", "apiVersion: v2\nname: echo\nversion: 0.2.0\ndependencies:\n- name: cozy-lib\n  version: 1.0.0\n  repository: oci://ghcr.io/cozystack/charts\n")
		}, build.Options{}, `dependency "cozy-lib" (repository "oci://ghcr.io/cozystack/charts") is not vendored in charts/: run ` + "`helm dependency build`"},
		{"file dependency outside the libraries", func(t *testing.T, dir string) {
			write(t, dir, "catalog.yaml", strings.Replace(readFile(t, filepath.Join(dir, "catalog.yaml")), "libraries:\n  - path: lib/demo-lib\n", "", 1))
		}, build.Options{}, "lib/demo-lib is not a library of the catalog: add {path: lib/demo-lib} to libraries"},
		{"library version outside the constraint", func(t *testing.T, dir string) {
			write(t, dir, "lib/demo-lib/Chart.yaml", "apiVersion: v2\nname: demo-lib\ntype: library\nversion: 1.0.0\n")
		}, build.Options{}, `wants version >=0.1.0 <1.0.0, but library lib/demo-lib is 1.0.0`},
		{"library that is an application", func(t *testing.T, dir string) {
			write(t, dir, "lib/demo-lib/Chart.yaml", "apiVersion: v2\nname: demo-lib\nversion: 0.1.0\n")
		}, build.Options{}, `libraries[0]: library lib/demo-lib: Chart.yaml has type "application", want library`},
		{"symlink leaving the catalog", func(t *testing.T, dir string) {
			outside := filepath.Join(t.TempDir(), "secret")
			write(t, filepath.Dir(outside), "secret", "token")
			if err := os.Symlink(outside, filepath.Join(dir, "charts/echo/secret.txt")); err != nil {
				t.Fatal(err)
			}
		}, build.Options{}, "outside the catalog directory; copy the file into the chart instead"},
		{"bad tag", func(t *testing.T, dir string) {}, build.Options{Tag: "-x"}, `tag "-x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyCatalog(t)
			tc.breakIt(t, dir)
			_, err := build.Build(context.Background(), dir, memory.New(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build: %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// K4 (README.md, "Values schemas"): every chart of the test catalog renders
// with Helm's schema validation when the platform adds _cluster and
// _namespace (and Helm its dependencies' keys), and still rejects an
// unknown key.
func TestChartsAdmitPlatformKeys(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	res, err := build.Build(ctx, testCatalog, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	platform := map[string]any{
		"_cluster":   map[string]any{"root-host": "example.org", "cluster-domain": "cozy.local"},
		"_namespace": map[string]any{"host": "tenant.example.org"},
	}
	for _, ch := range res.Charts {
		t.Run(ch.Path, func(t *testing.T) {
			data, err := content.FetchAll(ctx, store, ch.Descriptor)
			if err != nil {
				t.Fatal(err)
			}
			c, err := loader.LoadArchive(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			opts := chartutil.ReleaseOptions{Name: "r", Namespace: "tenant-x", IsInstall: true}
			if _, err := chartutil.ToRenderValues(c, platform, opts, nil); err != nil {
				t.Errorf("values with _cluster and _namespace: %v", err)
			}
			if c.Schema == nil {
				return
			}
			bad := map[string]any{"_cluster": map[string]any{}, "nope": 1}
			if _, err := chartutil.ToRenderValues(c, bad, opts, nil); err == nil || !strings.Contains(err.Error(), "nope") {
				t.Errorf("an unknown key: %v, want a schema error naming it", err)
			}
		})
	}
}
