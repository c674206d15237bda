// Tests of the catalog as a whole: catalog.yaml is valid and builds into an
// OCI artifact, every ApplicationDefinition decodes strictly and agrees with
// its chart and with catalog.yaml, and the operator charts' CRDs are what
// their pinned sources give.
package services_test

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
	"cozystack.io/sdk/charttest"
	"cozystack.io/sdk/crdsync"
	"cozystack.io/sdk/testenv"
)

func TestCatalogBuilds(t *testing.T) {
	cat, err := artifact.LoadCatalog(".")
	if err != nil {
		t.Fatal(err)
	}
	store, err := oci.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(context.Background(), ".", store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tag != cat.Version {
		t.Errorf("tag %q, want the version %q", res.Tag, cat.Version)
	}
	if len(res.Charts) != len(cat.ChartPaths()) {
		t.Errorf("%d chart layers, want %d", len(res.Charts), len(cat.ChartPaths()))
	}
	// The artifact passes the checks the platform's operator makes.
	if _, err := artifact.Pull(context.Background(), store, res.Tag, nil, artifact.PullOptions{}); err != nil {
		t.Fatalf("pull the built artifact: %v", err)
	}
	// Building again gives the same digest.
	again, err := build.Build(context.Background(), ".", store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Manifest.Digest != res.Manifest.Digest {
		t.Errorf("rebuild digest %s, want %s", again.Manifest.Digest, res.Manifest.Digest)
	}
}

// loadADs decodes every applicationdefinitions/*.yaml strictly.
func loadADs(t *testing.T) map[string]*v1alpha1.ApplicationDefinition {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("applicationdefinitions", "*.yaml"))
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

// The application charts are catalog.yaml applications, published for the
// ADs and never installed by a Package: no variant lists them as
// components, and every application has an AD.
func TestApplicationsAreNotComponents(t *testing.T) {
	cat, err := artifact.LoadCatalog(".")
	if err != nil {
		t.Fatal(err)
	}
	ads := loadADs(t)
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
	want := []string{"clickhouse", "kafka", "mariadb", "mongodb", "nats", "postgres", "rabbitmq", "redis"}
	if !slices.Equal(apps, want) {
		t.Errorf("applications %v, want %v", apps, want)
	}
}

func TestApplicationDefinitions(t *testing.T) {
	cat, err := artifact.LoadCatalog(".")
	if err != nil {
		t.Fatal(err)
	}
	ads := loadADs(t)
	var kinds []string
	for name, ad := range ads {
		t.Run(name, func(t *testing.T) {
			spec := ad.Spec
			kinds = append(kinds, spec.Application.Kind)
			if ad.APIVersion != v1alpha1.GroupVersion.String() || ad.Kind != "ApplicationDefinition" || ad.Name != name {
				t.Errorf("apiVersion %q kind %q name %q, want %s ApplicationDefinition %s", ad.APIVersion, ad.Kind, ad.Name, v1alpha1.GroupVersion, name)
			}
			if spec.Application.Singular != name || spec.Release.Prefix != name+"-" {
				t.Errorf("singular %q prefix %q, want %s and %s-", spec.Application.Singular, spec.Release.Prefix, name, name)
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
			data, err := os.ReadFile(filepath.Join("charts", name, "values.schema.json"))
			if err != nil {
				t.Fatal(err)
			}
			var chartSchema, adSchema map[string]any
			if err := json.Unmarshal(data, &chartSchema); err != nil {
				t.Fatal(err)
			}
			want, err := charttest.WithoutReservedKeys(chartSchema)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader([]byte(spec.Application.OpenAPISchema)))
			if err := dec.Decode(&adSchema); err != nil {
				t.Fatalf("openAPISchema: %v", err)
			}
			if diff := cmp.Diff(want, adSchema); diff != "" {
				t.Errorf("openAPISchema differs from charts/%s/values.schema.json without %v (-chart +AD):\n%s", name, charttest.ReservedKeys, diff)
			}
		})
	}
	slices.Sort(kinds)
	provided := slices.Sorted(slices.Values(cat.Provides.ApplicationKinds))
	if !slices.Equal(kinds, provided) {
		t.Errorf("ApplicationDefinitions serve %v, catalog.yaml provides %v", kinds, provided)
	}
}

// The committed CRDs are what crds.yaml's sources give: the Go module ones
// always; the mirror ones with ../shared/crds/upstream as the mirror, in a
// copy of the catalog (they are not committed).
func TestOperatorCRDs(t *testing.T) {
	sources, err := crdsync.Load(".")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	files, skipped, err := crdsync.Resolve(ctx, ".", sources, crdsync.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 || len(skipped) == 0 {
		t.Fatalf("%d module files and %d mirror sources, want both", len(files), len(skipped))
	}
	if err := crdsync.Check(".", files); err != nil {
		t.Error(err)
	}

	mirror := filepath.Join(testenv.SharedDir(t), "crds", "upstream")
	all, skipped, err := crdsync.Resolve(ctx, ".", sources, crdsync.Options{Mirror: mirror})
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
