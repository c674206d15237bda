package conformance

// Tests every catalog runs on itself, shared here because a catalog may
// not import another's code: conformance over the window of platform
// releases, catalog.yaml building into an artifact the operator accepts,
// and the ApplicationDefinitions agreeing with catalog.yaml and the
// charts.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"oras.land/oras-go/v2/content/oci"
	sigsyaml "sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
)

// RunCatalogTests runs a catalog's conformance tests on the catalog
// directory dir: RunWindow, and, as subtest
// refuses-newer-minPlatformVersion, CheckRefusesNewerMinPlatformVersion.
//
//	func TestConformance(t *testing.T) { conformance.RunCatalogTests(t, ".") }
func RunCatalogTests(t *testing.T, dir string) {
	t.Helper()
	RunWindow(t, dir)
	t.Run("refuses-newer-minPlatformVersion", func(t *testing.T) { CheckRefusesNewerMinPlatformVersion(t, dir) })
}

// CheckRefusesNewerMinPlatformVersion checks that a copy of the catalog in
// dir (its catalog.yaml, which must say minPlatformVersion: 0.1.0,
// applicationdefinitions/ and charts/) that declares minPlatformVersion
// 0.2.0 fails against platform 0.1.0, with one finding saying so.
func CheckRefusesNewerMinPlatformVersion(t *testing.T, dir string) {
	t.Helper()
	tmp := t.TempDir()
	for _, p := range []string{"applicationdefinitions", "charts"} {
		if err := os.CopyFS(filepath.Join(tmp, p), os.DirFS(filepath.Join(dir, p))); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join(tmp, "catalog.yaml")
	if !strings.Contains(string(data), "\nminPlatformVersion: 0.1.0\n") {
		t.Fatal("catalog.yaml has no minPlatformVersion: 0.1.0 line")
	}
	if err := os.WriteFile(catalog, []byte(strings.Replace(string(data), "\nminPlatformVersion: 0.1.0\n", "\nminPlatformVersion: 0.2.0\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := CheckDir(tmp, Options{PlatformVersion: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	errs := r.Errors()
	if len(errs) != 1 || errs[0].RuleID != "REQ-min-platform-version" || errs[0].File != "catalog.yaml" || errs[0].Line == 0 ||
		!strings.Contains(errs[0].Message, "needs platform 0.2.0 or newer; platform 0.1.0 refuses it") {
		t.Fatalf("errors %v, want one REQ-min-platform-version naming 0.2.0 and 0.1.0", errs)
	}
	t.Logf("%s", errs[0])
}

// CheckCatalogBuilds builds the catalog in dir into an OCI layout: tagged
// with its version, one layer per chart and one per file of
// applicationdefinitions/, passing the checks the platform's operator
// makes (artifact.Pull, which checks the definitions too), and the same
// digest when built again.
func CheckCatalogBuilds(t *testing.T, dir string) {
	t.Helper()
	cat, err := artifact.LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := oci.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(context.Background(), dir, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tag != cat.Version {
		t.Errorf("tag %q, want the version %q", res.Tag, cat.Version)
	}
	if len(res.Charts) != len(cat.ChartPaths()) {
		t.Errorf("%d chart layers, want %d", len(res.Charts), len(cat.ChartPaths()))
	}
	files, err := artifact.DefinitionFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The artifact passes the checks the platform's operator makes.
	a, err := artifact.Pull(context.Background(), store, res.Tag, nil, artifact.PullOptions{})
	if err != nil {
		t.Fatalf("pull the built artifact: %v", err)
	}
	var defs []string
	for _, d := range a.Definitions {
		defs = append(defs, d.Path)
	}
	if !slices.Equal(defs, files) {
		t.Errorf("definitions layers %v, want one per file of %s/: %v", defs, artifact.DefinitionsDir, files)
	}
	// Building again gives the same digest.
	again, err := build.Build(context.Background(), dir, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Manifest.Digest != res.Manifest.Digest {
		t.Errorf("rebuild digest %s, want %s", again.Manifest.Digest, res.Manifest.Digest)
	}
}

// LoadApplicationDefinitions decodes every <dir>/applicationdefinitions/*.yaml
// strictly, by file name without .yaml; one that does not decode fails t
// and is left out.
func LoadApplicationDefinitions(t *testing.T, dir string) map[string]*v1alpha1.ApplicationDefinition {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "applicationdefinitions", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ads := map[string]*v1alpha1.ApplicationDefinition{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ad := &v1alpha1.ApplicationDefinition{}
		if err := sigsyaml.UnmarshalStrict(data, ad); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		ads[strings.TrimSuffix(filepath.Base(f), ".yaml")] = ad
	}
	return ads
}

// CheckApplicationsAreNotComponents checks that the application charts of
// the catalog in dir are catalog.yaml applications, published for the ADs
// and never installed by a Package: no variant lists them as components,
// every application has an AD serving its kind, and the applications'
// names are want (sorted).
func CheckApplicationsAreNotComponents(t *testing.T, dir string, want []string) {
	t.Helper()
	cat, err := artifact.LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	ads := LoadApplicationDefinitions(t, dir)
	for _, app := range cat.Applications {
		for _, v := range cat.Variants {
			for _, comp := range v.Components {
				if comp.Chart == app.Chart {
					t.Errorf("variant %s: component %s installs the application chart %s; a Package must never install it", v.Name, comp.Name, app.Chart)
				}
			}
		}
		ad, ok := ads[app.Name]
		if !ok {
			t.Errorf("application %s has no applicationdefinitions/%s.yaml", app.Name, app.Name)
			continue
		}
		if app.Kind != ad.Spec.Application.Kind {
			t.Errorf("application %s: kind %q, its AD serves %q", app.Name, app.Kind, ad.Spec.Application.Kind)
		}
	}
	var apps []string
	for _, app := range cat.Applications {
		apps = append(apps, app.Name)
	}
	slices.Sort(apps)
	if !slices.Equal(apps, want) {
		t.Errorf("applications %v, want %v", apps, want)
	}
}

// ADChecks are what CheckApplicationDefinitions cannot know of a catalog.
type ADChecks struct {
	// Singular returns the spec.application.singular the AD of chart name
	// serving kind must have.
	Singular func(name, kind string) string
	// OpenAPISchema returns the openAPISchema an AD must carry for its
	// chart's values schema; Reserved names the keys it leaves out, for
	// messages.
	OpenAPISchema func(chartSchema map[string]any) (map[string]any, error)
	Reserved      []string
}

// CheckApplicationDefinitions checks, as a subtest each, every
// ApplicationDefinition of the catalog in dir (LoadApplicationDefinitions):
// its name, singular (c.Singular) and release prefix, that its release is
// the catalog's application chart of the same name serving its kind, its
// dashboard (K6), that the secrets and services it exposes name the
// release, and that its openAPISchema is c.OpenAPISchema of
// charts/<name>/values.schema.json. The ADs together serve the kinds
// catalog.yaml provides.
func CheckApplicationDefinitions(t *testing.T, dir string, c ADChecks) {
	t.Helper()
	cat, err := artifact.LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	ads := LoadApplicationDefinitions(t, dir)
	var kinds []string
	for name, ad := range ads {
		t.Run(name, func(t *testing.T) {
			spec := ad.Spec
			kinds = append(kinds, spec.Application.Kind)
			if ad.APIVersion != v1alpha1.GroupVersion.String() || ad.Kind != "ApplicationDefinition" || ad.Name != name {
				t.Errorf("apiVersion %q kind %q name %q, want %s ApplicationDefinition %s", ad.APIVersion, ad.Kind, ad.Name, v1alpha1.GroupVersion, name)
			}
			singular := c.Singular(name, spec.Application.Kind)
			if spec.Application.Singular != singular || spec.Release.Prefix != name+"-" {
				t.Errorf("singular %q prefix %q, want %s and %s-", spec.Application.Singular, spec.Release.Prefix, singular, name)
			}
			if spec.Release.ChartRef != nil || spec.Release.Source != cat.Name || spec.Release.Component != name {
				t.Errorf("release: chartRef %v source %q component %q, want no chartRef, source %s, component %s",
					spec.Release.ChartRef, spec.Release.Source, spec.Release.Component, cat.Name, name)
			}
			// release.source+component resolve to the ExternalArtifact the
			// operator publishes for an application of this catalog.
			app, ok := cat.Application(spec.Release.Component)
			if !ok {
				t.Fatalf("release.component %q is not an application in catalog.yaml (applications[].name); the operator publishes no chart for it", spec.Release.Component)
			}
			if app.Chart != "charts/"+name || app.Kind != spec.Application.Kind {
				t.Errorf("catalog.yaml application %s: chart %q kind %q, want charts/%s and the AD's kind %s", app.Name, app.Chart, app.Kind, name, spec.Application.Kind)
			}
			d := spec.Dashboard
			if d == nil || d.Category == "" || d.Singular == "" || d.Plural == "" || d.Description == "" || d.Icon == "" || len(d.KeysOrder) == 0 {
				t.Errorf("dashboard %+v: want category, singular, plural, description, icon and keysOrder (K6)", d)
			}
			for _, r := range append(spec.Secrets.Include, spec.Services.Include...) {
				for _, n := range r.ResourceNames {
					if !strings.HasPrefix(n, spec.Release.Prefix+"{{ .name }}") && !strings.Contains(n, spec.Release.Prefix+"{{ .name }}") {
						t.Errorf("resource name %q does not name the release %s{{ .name }}", n, spec.Release.Prefix)
					}
				}
			}

			// openAPISchema is the chart's values schema without the
			// reserved keys.
			data, err := os.ReadFile(filepath.Join(dir, "charts", name, "values.schema.json"))
			if err != nil {
				t.Fatal(err)
			}
			var chartSchema, adSchema map[string]any
			if err := json.Unmarshal(data, &chartSchema); err != nil {
				t.Fatal(err)
			}
			want, err := c.OpenAPISchema(chartSchema)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader([]byte(spec.Application.OpenAPISchema)))
			if err := dec.Decode(&adSchema); err != nil {
				t.Fatalf("openAPISchema: %v", err)
			}
			if diff := cmp.Diff(want, adSchema); diff != "" {
				t.Errorf("openAPISchema differs from charts/%s/values.schema.json without %v (-chart +AD):\n%s", name, c.Reserved, diff)
			}
		})
	}
	slices.Sort(kinds)
	provided := slices.Sorted(slices.Values(cat.Provides.ApplicationKinds))
	if !slices.Equal(kinds, provided) {
		t.Errorf("ApplicationDefinitions serve %v, catalog.yaml provides %v", kinds, provided)
	}
}
