package applicationdefinitions_test

import (
	"context"
	"sync"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/platform/internal/operator/adinstaller"
	"cozystack.io/sdk/localcp"
)

// The test catalogs, installed as cozystack-operator installs a catalog
// (no operator runs in these tests): their charts published as
// ExternalArtifacts, and their ApplicationDefinitions and the ClusterRoles
// of the rights they declare installed by the operator's own code
// (adinstaller.Roles, adinstaller.Install). Catalog "testapps":
//   - Stall and Booth (prefixes stall-, booth-) install the chart "board",
//     which renders the ConfigMap "board": two kinds whose objects collide;
//   - Escalator installs the chart "escalator", which renders a ClusterRole
//     beside a ConfigMap: what no application chart may do.
//
// Its charts may write ConfigMaps (applications[].rules). Catalog
// "lonerapps" has Loner, whose chart renders a ConfigMap too, but declares
// no rules: it may not use testapps' rights. Catalog "vaultapps" has
// Vault (prefix vault-), whose chart renders the credentials Secret
// "<release>-creds", as the services catalog's Postgres does, and declares
// Secrets; catalog "snoopapps" has Snoop (prefix snoop-), a third-party
// chart that looks up Secrets of its namespace and of vaultapps' release
// storage namespace and renders what it found into a ConfigMap, which it
// may write (releasestorage_test.go). Each kind is readable at view
// and writable at admin.
var (
	stalls     = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "stalls"}
	booths     = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "booths"}
	escalators = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "escalators"}
	loners     = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "loners"}
	vaults     = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "vaults"}
	snoops     = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "snoops"}

	testCatalogOnce sync.Once
)

const testSource = "testapps"

var testCharts = map[string]map[string]string{
	"vault": {
		"Chart.yaml":            "apiVersion: v2\nname: vault\nversion: 0.1.0\n",
		"templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-creds\nstringData:\n  password: hunter2\n",
	},
	"snoop": {
		"Chart.yaml": "apiVersion: v2\nname: snoop\nversion: 0.1.0\n",
		"templates/loot.yaml": `{{- $storage := printf "cozy-releases-app-%s" (printf "%s\x00%s" .Release.Namespace "vaultapps" | sha256sum | trunc 10) }}
{{- $creds := lookup "v1" "Secret" .Release.Namespace "vault-victim-creds" }}
{{- $all := lookup "v1" "Secret" .Release.Namespace "" }}
{{- $record := lookup "v1" "Secret" $storage "sh.helm.release.v1.vault-victim.v1" }}
{{- $records := lookup "v1" "Secret" $storage "" }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-loot
data:
  creds: {{ $creds | toJson | quote }}
  secrets: "{{ range $all.items }}{{ .metadata.name }} {{ end }}{{ range $records.items }}{{ .metadata.name }} {{ end }}"
  record: {{ $record | toJson | quote }}
`,
	},
	"board": {
		"Chart.yaml":               "apiVersion: v2\nname: board\nversion: 0.1.0\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: board\ndata:\n  release: {{ .Release.Name | quote }}\n",
	},
	"escalator": {
		"Chart.yaml": "apiVersion: v2\nname: escalator\nversion: 0.1.0\n",
		"templates/objects.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-harmless\n---\n" +
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {{ .Release.Name }}-everything\n" +
			"rules:\n  - apiGroups: [\"*\"]\n    resources: [\"*\"]\n    verbs: [\"*\"]\n",
	},
}

// testKind is a kind of a test catalog.
type testKind struct{ kind, plural, prefix, chart, source string }

var testKinds = []testKind{
	{"Stall", "stalls", "stall-", "board", testSource},
	{"Booth", "booths", "booth-", "board", testSource},
	{"Escalator", "escalators", "esc-", "escalator", testSource},
	{"Loner", "loners", "loner-", "board", "lonerapps"},
	{"Vault", "vaults", "vault-", "vault", "vaultapps"},
	{"Snoop", "snoops", "snoop-", "snoop", "snoopapps"},
}

// testRules are what each test catalog declares for its charts.
var testRules = map[string][]rbacv1.PolicyRule{
	testSource:  {{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
	"lonerapps": nil,
	// As the services catalog declares for its credentials.
	"vaultapps": {{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
	"snoopapps": {{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
}

func publishTestCatalog(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	testCatalogOnce.Do(func() {
		srv, err := localcp.NewArtifactServer()
		if err != nil {
			t.Fatal(err)
		}
		// The server outlives the test (the catalog is installed once per
		// binary): it stops with the test binary.
		for source := range testRules {
			for name, files := range testCharts {
				data, err := localcp.ChartArchive(name, files)
				if err != nil {
					t.Fatal(err)
				}
				publishArtifact(t, ctx, c, srv.Publish(source+"/"+name+".tgz", "0.1.0", data), v1alpha1.ComponentArtifactName(source, name))
			}
		}
		for source, rules := range testRules {
			cat := &artifact.Catalog{}
			cat.Name = source
			var defs []*unstructured.Unstructured
			for _, k := range testKinds {
				if k.source != source {
					continue
				}
				cat.Applications = append(cat.Applications, v1alpha1.PackageApplication{
					Name: k.chart, Chart: "charts/" + k.chart, Kind: k.kind, Rules: rules,
					TenantRoles: &v1alpha1.TenantRoles{
						View:  []rbacv1.PolicyRule{{APIGroups: []string{"apps.cozystack.io"}, Resources: []string{k.plural}, Verbs: []string{"get", "list", "watch"}}},
						Admin: []rbacv1.PolicyRule{{APIGroups: []string{"apps.cozystack.io"}, Resources: []string{k.plural}, Verbs: []string{"create", "update", "patch", "delete"}}},
					},
				})
				ad := &v1alpha1.ApplicationDefinition{
					TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ApplicationDefinition"},
					ObjectMeta: metav1.ObjectMeta{Name: k.plural},
					Spec: v1alpha1.ApplicationDefinitionSpec{
						Application: v1alpha1.ApplicationDefinitionApplication{Kind: k.kind, Singular: k.plural[:len(k.plural)-1], Plural: k.plural,
							OpenAPISchema: `{"type":"object","additionalProperties":false,"properties":{}}`},
						Release: v1alpha1.ApplicationDefinitionRelease{Prefix: k.prefix, Source: source, Component: k.chart},
					},
				}
				u, err := toUnstructured(ad)
				if err != nil {
					t.Fatal(err)
				}
				defs = append(defs, u)
			}
			roles, err := adinstaller.Roles(cat, source, defs)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := adinstaller.Install(ctx, c, source, append(defs, roles...)); err != nil {
				t.Fatal(err)
			}
		}
	})
	dyn := dynamic.NewForConfigOrDie(env.Config)
	for _, gvr := range []schema.GroupVersionResource{stalls, booths, escalators, loners, vaults, snoops} {
		eventually(t, ctx, gvr.Resource+" served", func() error {
			_, err := dyn.Resource(gvr).Namespace("tenant-root").List(ctx, metav1.ListOptions{})
			return err
		})
	}
}

// publishArtifact creates ExternalArtifact name in cozy-system with the
// status a source controller would write for art.
func publishArtifact(t *testing.T, ctx context.Context, c client.Client, art meta.Artifact, name string) {
	t.Helper()
	ea := &sourcev1.ExternalArtifact{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: v1alpha1.SystemNamespace}}
	if err := c.Create(ctx, ea); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	ea.Status.Artifact = &art
	apimeta.SetStatusCondition(&ea.Status.Conditions, metav1.Condition{Type: meta.ReadyCondition, Status: metav1.ConditionTrue,
		Reason: meta.SucceededReason, Message: "published by the test", ObservedGeneration: ea.Generation})
	if err := c.Status().Update(ctx, ea); err != nil {
		t.Fatal(err)
	}
}

// createApp creates application name of resource gvr in ns with an empty
// spec, retrying while the kind is not served yet.
func createApp(t *testing.T, ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	kind := ""
	for _, k := range testKinds {
		if k.plural == gvr.Resource {
			kind = k.kind
		}
	}
	eventually(t, ctx, gvr.Resource+" "+ns+"/"+name+" created", func() error {
		_, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps.cozystack.io/v1alpha1", "kind": kind, "metadata": map[string]any{"name": name}, "spec": map[string]any{},
		}}, metav1.CreateOptions{})
		return err
	})
}

func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: u}, nil
}
