package artifact_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
)

// groupsCatalog is a catalog whose privileged component "op" ships CRDs
// and whose application "app" grants tenant users rights; provides and
// deps are spliced in (YAML).
func groupsCatalog(t *testing.T, provides, dependsOn, opExtra, appRules string) *artifact.Catalog {
	t.Helper()
	doc := `apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: widgets
version: 1.0.0
minPlatformVersion: 0.1.0
provides:
` + provides + `
variants:
  - name: default
    dependsOn: ` + dependsOn + `
    components:
      - name: op
        chart: charts/op
        namespace: cozy-op
        privileged: true
        clusterRules:
          - {apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], verbs: [create]}
          - {apiGroups: [backups.cozystack.io], resources: [backupclasses], verbs: [create]}` + opExtra + `
applications:
  - name: app
    chart: charts/app
    rules:
      - {apiGroups: [""], resources: [services], verbs: [get]}
      - {apiGroups: [apps, policy], resources: [deployments, poddisruptionbudgets], verbs: [get]}` + appRules + `
`
	c, err := artifact.DecodeCatalog([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestValidateAPIGroups: provides.apiGroups and sharedAPIGroups, and the
// groups the rules name (README.md, "CRD groups", "Application rights").
func TestValidateAPIGroups(t *testing.T) {
	own := "  apiGroups: [widgets.example.org]\n  sharedAPIGroups: [widgets.example.org]"
	for _, tc := range []struct {
		name                              string
		reason                            string
		provides, deps, opExtra, appRules string
		want                              []string // substrings of the error, in order; none: valid
	}{
		{
			name:     "own, core, Kubernetes and platform groups",
			reason:   "the group check passes the catalog's own groups and Kubernetes' groups: rights in those are the rights checks' business",
			provides: own,
			deps:     "[]",
			opExtra:  "\n          - {apiGroups: [widgets.example.org, rbac.authorization.k8s.io], resources: [widgets, clusterroles], verbs: [get]}",
			appRules: "\n      - {apiGroups: [widgets.example.org, batch, autoscaling, networking.k8s.io], resources: [widgets, jobs], verbs: [get]}",
		},
		{
			name:     "aggregated group of its own",
			reason:   "an aggregated group (subresources.<own>) is the catalog's own when it is in provides.apiGroups",
			provides: "  apiGroups: [widgets.example.org, subresources.widgets.example.org]",
			deps:     "[]",
			appRules: "\n      - {apiGroups: [subresources.widgets.example.org], resources: [widgets/console], verbs: [get]}",
		},
		{
			name:     "another catalog's group without a dependency",
			reason:   "a rule in another catalog's group needs a dependency that shares it; the error says where to declare it",
			provides: own,
			deps:     "[]",
			appRules: "\n      - {apiGroups: [postgresql.cnpg.io], resources: [clusters], verbs: [get, create, delete]}",
			want:     []string{`applications[0].rules[2].apiGroups: Invalid value: "postgresql.cnpg.io": is not in provides.apiGroups and the catalog depends on no catalog`, "provides.sharedAPIGroups"},
		},
		{
			name:     "another catalog's group in a component's clusterRules",
			reason:   "the group check covers components' clusterRules, not only applications' rules",
			provides: own,
			deps:     "[]",
			opExtra:  "\n          - {apiGroups: [kubevirt.io], resources: [virtualmachines], verbs: [patch]}",
			want:     []string{`variants[0].components[0].clusterRules[2].apiGroups: Invalid value: "kubevirt.io"`},
		},
		{
			name:     "a dependency may share it (checked by the operator)",
			reason:   "with a dependency, a foreign group is left to the operator, which knows what the dependency shares",
			provides: own,
			deps:     "[services]",
			appRules: "\n      - {apiGroups: [postgresql.cnpg.io], resources: [clusters], verbs: [get]}",
		},
		{
			name:     "no provides at all",
			reason:   "a catalog without provides.apiGroups owns no CRD group at all",
			provides: "  applicationKinds: []",
			deps:     "[]",
			opExtra:  "\n          - {apiGroups: [widgets.example.org], resources: [widgets], verbs: [get]}",
			want:     []string{`variants[0].components[0].clusterRules[2].apiGroups: Invalid value: "widgets.example.org"`},
		},
		{
			name:     "reserved groups",
			reason:   "a catalog may not provide Kubernetes', Flux's or the platform's groups, a group without a dot, or one twice",
			provides: "  apiGroups: [apps.cozystack.io, storage.k8s.io, helm.toolkit.fluxcd.io, fluxcd.controlplane.io, nodot, widgets.example.org, widgets.example.org]",
			deps:     "[]",
			want: []string{`provides.apiGroups[0]: Invalid value: "apps.cozystack.io": is a group of Kubernetes`, `provides.apiGroups[1]`, `provides.apiGroups[2]`, `provides.apiGroups[3]`,
				`provides.apiGroups[4]: Invalid value: "nodot": a CRD's API group has at least one dot`, `provides.apiGroups[6]: Duplicate value`},
		},
		{
			name:     "shared but not shipped",
			reason:   "a shared group is one the catalog ships: it must be in provides.apiGroups",
			provides: "  apiGroups: [widgets.example.org]\n  sharedAPIGroups: [gadgets.example.org]",
			deps:     "[]",
			want:     []string{`provides.sharedAPIGroups[0]: Invalid value: "gadgets.example.org": is not in provides.apiGroups`},
		},
		{
			name:     "conversion webhook of its own CRD",
			reason:   "a conversion webhook for a CRD of the catalog's own groups is allowed",
			provides: own,
			deps:     "[]",
			opExtra:  "\n        conversionWebhooks: [widgets.widgets.example.org]",
		},
		{
			name:     "conversion webhook of another catalog's CRD",
			reason:   "a conversion webhook names a CRD of the catalog's groups; each bad name is reported",
			provides: own,
			deps:     "[]",
			opExtra:  "\n        conversionWebhooks: [clusters.postgresql.cnpg.io, Bad]",
			want: []string{`variants[0].components[0].conversionWebhooks[1]: Invalid value: "Bad": want a CRD name`,
				`variants[0].components[0].conversionWebhooks[0]: Invalid value: "clusters.postgresql.cnpg.io": is not a CRD of this catalog's groups`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := groupsCatalog(t, tc.provides, tc.deps, tc.opExtra, tc.appRules).Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("%s: Validate: %v (%s)", tc.name, err, tc.reason)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s: Validate passed, want %q (%s)", tc.name, tc.want, tc.reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: Validate = %v\nwant it to contain %q (%s)", tc.name, err, w, tc.reason)
				}
			}
		})
	}
}

// TestForeignGroups: what the operator checks against the dependencies.
func TestForeignGroups(t *testing.T) {
	c := groupsCatalog(t, "  apiGroups: [widgets.example.org]", "[services]",
		"\n          - {apiGroups: [widgets.example.org, kubevirt.io], resources: [virtualmachines], verbs: [get]}",
		"\n      - {apiGroups: [postgresql.cnpg.io], resources: [clusters], verbs: [get]}")
	got := c.ForeignGroups()
	if len(got) != 2 || got[0].Group != "kubevirt.io" || got[0].Field != "variants[0].components[0].clusterRules[2].apiGroups" ||
		got[1].Group != "postgresql.cnpg.io" || got[1].Field != "applications[0].rules[2].apiGroups" ||
		len(got[1].Dependencies) != 1 || got[1].Dependencies[0] != "services" {
		t.Errorf("ForeignGroups = %+v", got)
	}
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%s
spec:
  group: %s
`

// chartArchive gzips a tar of files (path -> content).
func chartArchive(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func crd(group string) string { return strings.ReplaceAll(widgetCRD, "%s", group) }

// TestCheckChartCRDs: every CRD a chart ships (crds/ of the chart or of
// a subchart, nested archives included, and static templates) is of the
// catalog's groups (README.md, "CRD groups").
func TestCheckChartCRDs(t *testing.T) {
	c := groupsCatalog(t, "  apiGroups: [widgets.example.org]", "[]", "", "")
	sub := chartArchive(t, map[string]string{"sub/Chart.yaml": "name: sub\n", "sub/crds/x.yaml": crd("victim.example.org")})
	for _, tc := range []struct {
		name   string
		reason string
		files  map[string]string
		want   []string
	}{
		{
			name:   "its own CRDs",
			reason: "CRDs of the catalog's own groups ship, and other objects are not CRDs",
			files:  map[string]string{"op/crds/w.yaml": crd("widgets.example.org"), "op/templates/cm.yaml": "kind: ConfigMap\n"},
			want:   nil,
		},
		{
			name:   "another catalog's CRD in crds/",
			reason: "a CRD of another catalog's group is refused with the file, the CRD, its group and the fix",
			files:  map[string]string{"op/crds/w.yaml": crd("widgets.example.org") + "---\n" + crd("postgresql.cnpg.io")},
			want:   []string{`chart charts/op: op/crds/w.yaml: CustomResourceDefinition widgets.postgresql.cnpg.io has spec.group "postgresql.cnpg.io", which is not in provides.apiGroups [widgets.example.org]: add the group to provides.apiGroups in catalog.yaml`},
		},
		{
			name:   "in a subchart's crds/",
			reason: "crds/ of a subchart, at any depth, is checked too",
			files:  map[string]string{"op/charts/lib/crds/deep/x.yml": crd("victim.example.org")},
			want:   []string{"op/charts/lib/crds/deep/x.yml: CustomResourceDefinition widgets.victim.example.org"},
		},
		{
			name:   "in a nested subchart archive",
			reason: "a subchart packed as an archive is opened and its crds/ checked",
			files:  map[string]string{"op/charts/sub-0.1.0.tgz": string(sub)},
			want:   []string{"op/charts/sub/crds/x.yaml: CustomResourceDefinition widgets.victim.example.org"},
		},
		{
			name:   "in a static template",
			reason: "a CRD in a static template would be installed too, so it is checked",
			files:  map[string]string{"op/templates/crd.yaml": crd("victim.example.org")},
			want:   []string{"op/templates/crd.yaml"},
		},
		{
			name:   "a templated template is left to admission",
			reason: "a template with Helm actions is not parsed here: admission checks what it renders",
			files:  map[string]string{"op/templates/crd.yaml": crd("victim.example.org") + "  # {{ .Release.Name }}\n"},
			want:   nil,
		},
		{
			name:   "not a CRD",
			reason: "only YAML files holding a CustomResourceDefinition are CRDs",
			files:  map[string]string{"op/crds/readme.md": "kind: CustomResourceDefinition\n", "op/crds/cm.yaml": "apiVersion: v1\nkind: ConfigMap\n"},
			want:   nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := artifact.ChartCRDFiles(bytes.NewReader(chartArchive(t, tc.files)), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			err = artifact.CheckChartCRDs(c, "charts/op", files)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("%s: CheckChartCRDs: %v (%s)", tc.name, err, tc.reason)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s: CheckChartCRDs passed, want %q (%s)", tc.name, tc.want, tc.reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: CheckChartCRDs = %v\nwant it to contain %q (%s)", tc.name, err, w, tc.reason)
				}
			}
		})
	}
	// A file over the limit is refused, not skipped.
	if _, err := artifact.ChartCRDFiles(bytes.NewReader(chartArchive(t, map[string]string{"op/crds/big.yaml": strings.Repeat("#", 100)})), 10); err == nil ||
		!strings.Contains(err.Error(), "op/crds/big.yaml: larger than 10 bytes") {
		t.Errorf("ChartCRDFiles over the limit = %v", err)
	}
}

// A chart layer swapped for one that ships another catalog's CRD (what
// the build refuses to make) is refused at Pull, with or without a
// staging store, and nothing is stored.
func TestPullRefusesForeignCRDs(t *testing.T) {
	store := memory.New()
	res, err := build.Build(context.Background(), testCatalog, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	evil := pushBlob(t, store, artifact.ChartMediaType, chartArchive(t, map[string]string{
		"echo/Chart.yaml":         "apiVersion: v2\nname: echo\nversion: 0.1.0\n",
		"echo/crds/clusters.yaml": crd("postgresql.cnpg.io"),
	}))
	craft(t, store, res, func(m *ocispec.Manifest) {
		evil.Annotations = m.Layers[0].Annotations
		m.Layers[0] = evil
	})
	for _, dst := range []*memory.Store{nil, memory.New()} {
		var pusher content.Pusher
		if dst != nil {
			pusher = dst
		}
		_, err = artifact.Pull(context.Background(), store, "crafted", pusher, artifact.PullOptions{StagingDir: t.TempDir()})
		if !errors.Is(err, artifact.ErrInvalidArtifact) || !strings.Contains(err.Error(), `echo/crds/clusters.yaml: CustomResourceDefinition widgets.postgresql.cnpg.io has spec.group "postgresql.cnpg.io", which is not in provides.apiGroups`) {
			t.Fatalf("Pull: %v, want the foreign CRD refused", err)
		}
		if dst != nil {
			if ok, _ := dst.Exists(context.Background(), evil); ok {
				t.Errorf("the chart was stored")
			}
		}
	}
}

// The build refuses a chart whose crds/ holds a CRD of a group the
// catalog does not provide, naming the file and the field.
func TestBuildRefusesForeignCRDs(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("catalog.yaml", `apiVersion: cozystack.io/v1alpha1
kind: Catalog
name: thief
version: 1.0.0
minPlatformVersion: 0.1.0
provides:
  apiGroups: [thief.example.org]
variants:
  - name: default
    components:
      - name: op
        chart: charts/op
        namespace: cozy-op
`)
	write("charts/op/Chart.yaml", "apiVersion: v2\nname: op\nversion: 0.1.0\n")
	write("charts/op/crds/mine.yaml", crd("thief.example.org"))
	if _, err := build.Build(context.Background(), dir, memory.New(), build.Options{}); err != nil {
		t.Fatalf("Build with its own CRD: %v", err)
	}
	write("charts/op/crds/stolen.yaml", crd("postgresql.cnpg.io"))
	_, err := build.Build(context.Background(), dir, memory.New(), build.Options{})
	if err == nil || !strings.Contains(err.Error(), `catalog.yaml: chart charts/op: op/crds/stolen.yaml: CustomResourceDefinition widgets.postgresql.cnpg.io has spec.group "postgresql.cnpg.io", which is not in provides.apiGroups [thief.example.org]`) {
		t.Fatalf("Build = %v, want the foreign CRD refused", err)
	}
}
