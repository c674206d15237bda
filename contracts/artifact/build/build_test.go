package build_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"oras.land/oras-go/v2"
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
		reason  string
		breakIt func(t *testing.T, dir string)
		opts    build.Options
		want    string
	}{
		{
			name:   "invalid catalog.yaml",
			reason: "catalog.yaml is validated before anything is built: a catalog without a version is refused",
			breakIt: func(t *testing.T, dir string) {
				write(t, dir, "catalog.yaml", "apiVersion: cozystack.io/v1alpha1\nkind: Catalog\nname: demo\n")
			},
			opts: build.Options{},
			want: "version: Required value",
		},
		{
			name:   "missing chart directory",
			reason: "every chart a component names must exist in the catalog directory; the error names the chart",
			breakIt: func(t *testing.T, dir string) {
				os.RemoveAll(filepath.Join(dir, "charts/echo-operator"))
			},
			opts: build.Options{},
			want: "chart charts/echo-operator",
		},
		{
			name:   "chart without Chart.yaml",
			reason: "a chart directory is a Helm chart only with its Chart.yaml",
			breakIt: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, "charts/echo-operator/Chart.yaml"))
			},
			opts: build.Options{},
			want: "Chart.yaml file is missing",
		},
		{
			name:   "dependency neither vendored nor a library",
			reason: "a dependency is built from charts/ or a catalog library, never fetched at build time; the error says how to vendor it",
			breakIt: func(t *testing.T, dir string) {
				write(t, dir, "charts/echo/Chart.yaml", "apiVersion: v2\nname: echo\nversion: 0.2.0\ndependencies:\n- name: cozy-lib\n  version: 1.0.0\n  repository: oci://ghcr.io/cozystack/charts\n")
			},
			opts: build.Options{},
			want: `dependency "cozy-lib" (repository "oci://ghcr.io/cozystack/charts") is not vendored in charts/: run ` + "`helm dependency build`",
		},
		// cozy-lib as a library of the catalog, by path: what conformance
		// refuses (K5-pin) build refuses too, with the same rule.
		{
			name:   "cozy-lib from a file:// library",
			reason: "cozy-lib is taken only as the OCI chart the platform publishes, the same rule conformance applies (K5-pin)",
			breakIt: func(t *testing.T, dir string) {
				if err := os.MkdirAll(filepath.Join(dir, "lib/cozy-lib"), 0o755); err != nil {
					t.Fatal(err)
				}
				write(t, dir, "lib/cozy-lib/Chart.yaml", "apiVersion: v2\nname: cozy-lib\ntype: library\nversion: 0.1.0\n")
				write(t, dir, "catalog.yaml", strings.Replace(readFile(t, filepath.Join(dir, "catalog.yaml")), "libraries:\n", "libraries:\n  - path: lib/cozy-lib\n", 1))
				write(t, dir, "charts/echo/Chart.yaml", "apiVersion: v2\nname: echo\nversion: 0.2.0\ndependencies:\n- name: cozy-lib\n  version: 0.1.0\n  repository: file://../../lib/cozy-lib\n")
			},
			opts: build.Options{},
			want: `chart charts/echo: Chart.yaml dependencies[0].repository: cozy-lib comes from "file://../../lib/cozy-lib": a catalog takes it only as the OCI chart the platform publishes`,
		},
		{
			name:   "cozy-lib at a range of versions",
			reason: "cozy-lib is pinned to one exact version, so every build of a catalog gets the same library",
			breakIt: func(t *testing.T, dir string) {
				write(t, dir, "charts/echo/Chart.yaml", "apiVersion: v2\nname: echo\nversion: 0.2.0\ndependencies:\n- name: cozy-lib\n  version: \">=0.1.0\"\n  repository: oci://ghcr.io/cozystack/charts\n")
			},
			opts: build.Options{},
			want: `dependencies[0].version: cozy-lib version ">=0.1.0" is not one exact version`,
		},
		{
			name:   "file dependency outside the libraries",
			reason: "a file:// dependency must point at a library the catalog declares in libraries; the error says what to add",
			breakIt: func(t *testing.T, dir string) {
				write(t, dir, "catalog.yaml", strings.Replace(readFile(t, filepath.Join(dir, "catalog.yaml")), "libraries:\n  - path: lib/demo-lib\n", "", 1))
			},
			opts: build.Options{},
			want: "lib/demo-lib is not a library of the catalog: add {path: lib/demo-lib} to libraries",
		},
		{
			name:   "library version outside the constraint",
			reason: "a library dependency's version constraint is checked against the library's Chart.yaml",
			breakIt: func(t *testing.T, dir string) {
				write(t, dir, "lib/demo-lib/Chart.yaml", "apiVersion: v2\nname: demo-lib\ntype: library\nversion: 1.0.0\n")
			},
			opts: build.Options{},
			want: `wants version >=0.1.0 <1.0.0, but library lib/demo-lib is 1.0.0`,
		},
		{
			name:   "library that is an application",
			reason: "a catalog library must be a Helm library chart, not an application",
			breakIt: func(t *testing.T, dir string) {
				write(t, dir, "lib/demo-lib/Chart.yaml", "apiVersion: v2\nname: demo-lib\nversion: 0.1.0\n")
			},
			opts: build.Options{},
			want: `libraries[0]: library lib/demo-lib: Chart.yaml has type "application", want library`,
		},
		{
			name:   "symlink leaving the catalog",
			reason: "a symlink out of the catalog directory is refused, so a build cannot pack files from elsewhere",
			breakIt: func(t *testing.T, dir string) {
				outside := filepath.Join(t.TempDir(), "secret")
				write(t, filepath.Dir(outside), "secret", "token")
				if err := os.Symlink(outside, filepath.Join(dir, "charts/echo/secret.txt")); err != nil {
					t.Fatal(err)
				}
			},
			opts: build.Options{},
			want: "outside the catalog directory; copy the file into the chart instead",
		},
		{
			name:    "bad tag",
			reason:  "the tag is checked against the OCI tag grammar before anything is pushed",
			breakIt: func(t *testing.T, dir string) {},
			opts:    build.Options{Tag: "-x"},
			want:    `tag "-x"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyCatalog(t)
			tc.breakIt(t, dir)
			_, err := build.Build(context.Background(), dir, memory.New(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: Build: %v\nwant an error containing %q (%s)", tc.name, err, tc.want, tc.reason)
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

// testDefinitions are the definitions of the test catalog, kept outside
// it (README.md there).
const testDefinitions = "../testdata/definitions"

// copyCatalogWithDefinitions copies the test catalog with the files of
// testDefinitions in applicationdefinitions/.
func copyCatalogWithDefinitions(t *testing.T) string {
	t.Helper()
	dir := copyCatalog(t)
	defs := filepath.Join(dir, artifact.DefinitionsDir)
	if err := os.Mkdir(defs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"echo.yaml", "echo-policy.yml"} {
		if err := os.WriteFile(filepath.Join(defs, name), []byte(readFile(t, filepath.Join(testDefinitions, name))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A catalog with applicationdefinitions/ builds one layer per file, after
// the charts, sorted by name, titled with the slash path; files of other
// names are not layers; the digest is reproducible; Pull returns the
// definitions decoded.
func TestBuildWithDefinitions(t *testing.T) {
	ctx := context.Background()
	dir := copyCatalogWithDefinitions(t)
	// Neither a file of another suffix nor a subdirectory is a definition.
	if err := os.WriteFile(filepath.Join(dir, artifact.DefinitionsDir, "notes.md"), []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, artifact.DefinitionsDir, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	res, err := build.Build(ctx, dir, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := content.FetchAll(ctx, store, res.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range m.Layers {
		got = append(got, l.MediaType+" "+l.Annotations[artifact.AnnotationTitle])
	}
	want := []string{
		artifact.ChartMediaType + " charts/echo",
		artifact.ChartMediaType + " charts/echo-operator",
		artifact.ChartMediaType + " charts/echo-tenant",
		artifact.DefinitionMediaType + " applicationdefinitions/echo-policy.yml",
		artifact.DefinitionMediaType + " applicationdefinitions/echo.yaml",
	}
	if !slices.Equal(got, want) {
		t.Errorf("layers:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for i, d := range res.Definitions {
		l := m.Layers[len(res.Charts)+i]
		if !content.Equal(d.Descriptor, l) || len(l.Annotations) != 1 {
			t.Errorf("definitions %s: descriptor %v, manifest layer %v (want the title annotation only)", d.Path, d.Descriptor, l)
		}
		// The layer is the file as it is.
		file := readFile(t, filepath.Join(dir, filepath.FromSlash(d.Path)))
		blob, err := content.FetchAll(ctx, store, l)
		if err != nil || string(blob) != file {
			t.Errorf("definitions %s: layer bytes differ from the file (%v)", d.Path, err)
		}
	}

	// Reproducible: the same directory, another store, another time of
	// day; and a copy of the directory elsewhere.
	again, err := build.Build(ctx, copyCatalogWithDefinitions(t), memory.New(), build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Manifest.Digest != res.Manifest.Digest {
		t.Errorf("two builds of one catalog: %s and %s", res.Manifest.Digest, again.Manifest.Digest)
	}
	for i := range again.Definitions {
		if again.Definitions[i].Descriptor.Digest != res.Definitions[i].Descriptor.Digest {
			t.Errorf("definitions %s: digests %s and %s", again.Definitions[i].Path, res.Definitions[i].Descriptor.Digest, again.Definitions[i].Descriptor.Digest)
		}
	}
	// Without the definitions the digest differs: they are covered by it.
	plain, err := build.Build(ctx, testCatalog, memory.New(), build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Manifest.Digest == res.Manifest.Digest || len(plain.Definitions) != 0 {
		t.Errorf("the catalog without definitions: %s, %d definitions", plain.Manifest.Digest, len(plain.Definitions))
	}

	// Round trip through an OCI layout.
	layoutDir := t.TempDir()
	layout, err := oci.New(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := build.Build(ctx, dir, layout, build.Options{}); err != nil {
		t.Fatal(err)
	}
	fromDisk, err := oci.NewFromFS(ctx, os.DirFS(layoutDir))
	if err != nil {
		t.Fatal(err)
	}
	cache := memory.New()
	a, err := artifact.Pull(ctx, fromDisk, res.Tag, cache, artifact.PullOptions{})
	if err != nil {
		t.Fatalf("Pull: %v", err)
	}
	var paths, objects []string
	for _, d := range a.Definitions {
		paths = append(paths, d.Path)
		if ok, _ := cache.Exists(ctx, d.Descriptor); !ok {
			t.Errorf("the cache lacks definitions %s", d.Path)
		}
	}
	for _, o := range a.DefinitionObjects() {
		objects = append(objects, o.GetAPIVersion()+" "+o.GetKind()+" "+o.GetName())
	}
	if want := []string{"applicationdefinitions/echo-policy.yml", "applicationdefinitions/echo.yaml"}; !slices.Equal(paths, want) {
		t.Errorf("pulled definitions %v, want %v", paths, want)
	}
	if want := []string{
		"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy echo-message.cozystack.io",
		"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding echo-message.cozystack.io",
		"cozystack.io/v1alpha1 ApplicationDefinition echo",
	}; !slices.Equal(objects, want) {
		t.Errorf("pulled objects %v, want %v", objects, want)
	}
	if plural, _, _ := unstructured.NestedString(a.Definitions[1].Objects[0].Object, "spec", "application", "plural"); plural != "echoes" {
		t.Errorf("the pulled AD's plural is %q", plural)
	}
	// DefinitionObjects returns copies.
	a.DefinitionObjects()[0].SetName("changed")
	if a.Definitions[0].Objects[0].GetName() != "echo-message.cozystack.io" {
		t.Error("changing what DefinitionObjects returned changed the artifact")
	}
}

// A definition the platform would not install refuses the build, naming
// the file and the field, before anything is pushed.
func TestBuildRefusesBadDefinitions(t *testing.T) {
	const ad = "applicationdefinitions/echo.yaml"
	const policy = "applicationdefinitions/echo-policy.yml"
	edit := func(file, old, new string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			t.Helper()
			p := filepath.Join(dir, filepath.FromSlash(file))
			data := readFile(t, p)
			if !strings.Contains(data, old) {
				t.Fatalf("%s has no %q", file, old)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(data, old, new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		reason  string
		breakIt func(t *testing.T, dir string)
		want    []string
	}{
		{
			name:    "an object of another kind",
			reason:  "a definitions file holds only the kinds the platform installs, never e.g. a ClusterRoleBinding",
			breakIt: edit(policy, "kind: ValidatingAdmissionPolicyBinding", "kind: ClusterRoleBinding"),
			want:    []string{policy + ", document 2: ", `kind "ClusterRoleBinding"`, "installs only"},
		},
		{
			name:    "an AD for a kind not provided",
			reason:  "an AD may define only a kind the catalog provides, and every provided kind needs its AD",
			breakIt: edit(ad, "kind: Echo", "kind: Postgres"),
			want: []string{ad + ", document 1 (ApplicationDefinition echo): spec.application.kind: Invalid value: \"Postgres\": is not in catalog.yaml provides.applicationKinds [Echo]",
				"catalog.yaml: provides.applicationKinds[0]: kind Echo has no ApplicationDefinition"},
		},
		{
			name:    "a policy matching pods",
			reason:  "a policy may match only the catalog's own API group, never core objects like pods",
			breakIt: edit(policy, `- apiGroups: ["apps.cozystack.io"]`, `- apiGroups: [""]`),
			want:    []string{policy + ", document 1 (ValidatingAdmissionPolicy echo-message.cozystack.io): spec.matchConstraints.resourceRules[0].apiGroups"},
		},
		{
			name:    "a policy matching another catalog's kind",
			reason:  "a policy may match only resources the catalog serves, not another catalog's kinds",
			breakIt: edit(policy, `resources: ["echoes", "echoes/status"]`, `resources: ["echoes", "postgreses"]`),
			want:    []string{policy + ", document 1 (ValidatingAdmissionPolicy echo-message.cozystack.io): spec.matchConstraints.resourceRules[0].resources[1]: Invalid value: \"postgreses\""},
		},
		{
			name:    "a binding to an unknown policy",
			reason:  "a binding must bind a policy of the same catalog, not a cluster-wide one",
			breakIt: edit(policy, "policyName: echo-message.cozystack.io", "policyName: cluster-wide"),
			want:    []string{policy + ", document 2 (ValidatingAdmissionPolicyBinding echo-message.cozystack.io): spec.policyName: Invalid value: \"cluster-wide\""},
		},
		{
			name:    "an unknown field in an AD's spec",
			reason:  "an AD is decoded strictly: a misspelt spec field is refused, not ignored",
			breakIt: edit(ad, "  release:\n", "  relese: {}\n  release:\n"),
			want:    []string{ad + ", document 1 (ApplicationDefinition echo): unknown field \"spec.relese\""},
		},
		{
			name:    "a namespaced object",
			reason:  "definitions are cluster-scoped: a namespace on one is forbidden",
			breakIt: edit(ad, "  name: echo\n", "  name: echo\n  namespace: tenant-root\n"),
			want:    []string{ad + ", document 1 (ApplicationDefinition echo): metadata.namespace: Forbidden"},
		},
		{
			name:    "a document that is not YAML",
			reason:  "a file that is not YAML is refused with its document and line",
			breakIt: edit(policy, "validationActions: [Deny]", "validationActions: [Deny"),
			want:    []string{policy + ", document 2 (line 18): not valid YAML"},
		},
		{
			name:    "a duplicate key",
			reason:  "a duplicate key is refused rather than the last value silently winning",
			breakIt: edit(ad, "  name: echo\n", "  name: echo\n  name: other\n"),
			want:    []string{ad + ", document 1 (line 1): not valid YAML", `"name" already set in map`},
		},
		{
			name:   "a definition linking outside the catalog",
			reason: "a definition that is a symlink out of the catalog is refused, so a build cannot pack files from elsewhere",
			breakIt: func(t *testing.T, dir string) {
				outside := filepath.Join(t.TempDir(), "x.yaml")
				if err := os.WriteFile(outside, []byte(readFile(t, filepath.Join(dir, ad))), 0o644); err != nil {
					t.Fatal(err)
				}
				os.Remove(filepath.Join(dir, ad))
				if err := os.Symlink(outside, filepath.Join(dir, ad)); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{ad + ": links to", "outside the catalog directory"},
		},
		{
			name:   "a directory named like a definition",
			reason: "only regular files are definitions: a directory with a .yaml name is refused",
			breakIt: func(t *testing.T, dir string) {
				if err := os.Mkdir(filepath.Join(dir, "applicationdefinitions/more.yaml"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"applicationdefinitions/more.yaml: not a regular file"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyCatalogWithDefinitions(t)
			tc.breakIt(t, dir)
			store := &counting{Target: memory.New()}
			_, err := build.Build(context.Background(), dir, store, build.Options{})
			if err == nil {
				t.Fatalf("%s: Build succeeded (%s)", tc.name, tc.reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: Build: %v\nwant an error containing %q (%s)", tc.name, err, w, tc.reason)
				}
			}
			if store.pushes != 0 {
				t.Errorf("%s: a refused build pushed %d blobs (%s)", tc.name, store.pushes, tc.reason)
			}
		})
	}
}

// counting counts the blobs pushed to a target.
type counting struct {
	oras.Target
	pushes int
}

func (c *counting) Push(ctx context.Context, desc ocispec.Descriptor, r io.Reader) error {
	c.pushes++
	return c.Target.Push(ctx, desc, r)
}

// The repository's catalogs build with their definitions, and the
// artifacts pass Pull: one definitions layer per file of
// applicationdefinitions/.
func TestRepositoryCatalogsBuild(t *testing.T) {
	for _, tc := range []struct {
		dir     string
		reason  string
		objects []string
	}{
		{
			dir:    "../../../catalogs/services",
			reason: "the services catalog builds and its eight ADs come back from Pull in file order",
			objects: []string{
				"ApplicationDefinition clickhouse", "ApplicationDefinition kafka", "ApplicationDefinition mariadb", "ApplicationDefinition mongodb",
				"ApplicationDefinition nats", "ApplicationDefinition postgres", "ApplicationDefinition rabbitmq", "ApplicationDefinition redis"},
		},
		{
			dir:    "../../../catalogs/virtualization",
			reason: "the virtualization catalog builds and its four ADs come back from Pull in file order",
			objects: []string{
				"ApplicationDefinition kubernetes", "ApplicationDefinition vm-disk", "ApplicationDefinition vm-instance", "ApplicationDefinition vpc"},
		},
		// The platform's own catalog (platform/catalog.yaml), whose
		// definitions include a policy and its binding.
		{
			dir:    "../../../platform",
			reason: "the platform catalog builds, and its policy and binding come back from Pull with its AD",
			objects: []string{
				"ValidatingAdmissionPolicy tenant-namespace-length.cozystack.io", "ValidatingAdmissionPolicyBinding tenant-namespace-length.cozystack.io",
				"ApplicationDefinition tenant"},
		},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(tc.dir, artifact.CatalogFile)); err != nil {
				t.Fatalf("catalog.yaml of a repository catalog: %v", err)
			}
			ctx := context.Background()
			store := memory.New()
			res, err := build.Build(ctx, tc.dir, store, build.Options{})
			if err != nil {
				t.Fatal(err)
			}
			files, err := artifact.DefinitionFiles(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			a, err := artifact.Pull(ctx, store, res.Tag, nil, artifact.PullOptions{})
			if err != nil {
				t.Fatalf("Pull: %v", err)
			}
			var paths, objects []string
			for _, d := range a.Definitions {
				paths = append(paths, d.Path)
			}
			for _, o := range a.DefinitionObjects() {
				objects = append(objects, o.GetKind()+" "+o.GetName())
			}
			if len(files) == 0 || !slices.Equal(paths, files) {
				t.Errorf("%s: definitions layers %v, want the files %v (%s)", tc.dir, paths, files, tc.reason)
			}
			if !slices.Equal(objects, tc.objects) {
				t.Errorf("%s: objects %v, want %v (%s)", tc.dir, objects, tc.objects, tc.reason)
			}
		})
	}
}
