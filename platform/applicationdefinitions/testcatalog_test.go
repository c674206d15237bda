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
	"cozystack.io/platform/internal/operator/definitions"
	"cozystack.io/sdk/localcp"
)

// The test catalog "testapps", installed as cozystack-operator installs a
// catalog (no operator runs in these tests): its charts published as
// ExternalArtifacts, its ApplicationDefinitions applied, and the
// ClusterRoles of the rights it declares written by the operator's own
// definitions.Roles. Kinds:
//   - Stall and Booth (prefixes stall-, booth-) install the chart "board",
//     which renders the ConfigMap "board": two kinds whose objects collide;
//   - Escalator installs the chart "escalator", which renders a ClusterRole
//     beside a ConfigMap: what no application chart may do.
//
// Each kind is readable at view and writable at admin; the charts may
// write ConfigMaps (applications[].rules).
var (
	stalls     = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "stalls"}
	booths     = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "booths"}
	escalators = schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: "escalators"}

	testCatalogOnce sync.Once
)

const testSource = "testapps"

var testCharts = map[string]map[string]string{
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

// testKinds are the kinds of the test catalog: kind, plural, prefix, chart.
var testKinds = [][4]string{
	{"Stall", "stalls", "stall-", "board"},
	{"Booth", "booths", "booth-", "board"},
	{"Escalator", "escalators", "esc-", "escalator"},
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
		for name, files := range testCharts {
			data, err := localcp.ChartArchive(name, files)
			if err != nil {
				t.Fatal(err)
			}
			publishArtifact(t, ctx, c, srv.Publish(testSource+"/"+name+".tgz", "0.1.0", data), v1alpha1.ComponentArtifactName(testSource, name))
		}
		cat := &artifact.Catalog{}
		cat.Name = testSource
		var defs []*unstructured.Unstructured
		for _, k := range testKinds {
			kind, plural, prefix, chart := k[0], k[1], k[2], k[3]
			cat.Applications = append(cat.Applications, v1alpha1.PackageApplication{
				Name: plural, Chart: "charts/" + chart, Kind: kind,
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
				TenantRoles: &v1alpha1.TenantRoles{
					View:  []rbacv1.PolicyRule{{APIGroups: []string{"apps.cozystack.io"}, Resources: []string{plural}, Verbs: []string{"get", "list", "watch"}}},
					Admin: []rbacv1.PolicyRule{{APIGroups: []string{"apps.cozystack.io"}, Resources: []string{plural}, Verbs: []string{"create", "update", "patch", "delete"}}},
				},
			})
			ad := &v1alpha1.ApplicationDefinition{
				TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ApplicationDefinition"},
				ObjectMeta: metav1.ObjectMeta{Name: plural},
				Spec: v1alpha1.ApplicationDefinitionSpec{
					Application: v1alpha1.ApplicationDefinitionApplication{Kind: kind, Singular: plural[:len(plural)-1], Plural: plural,
						OpenAPISchema: `{"type":"object","additionalProperties":false,"properties":{}}`},
					Release: v1alpha1.ApplicationDefinitionRelease{Prefix: prefix, Source: testSource, Component: chart},
				},
			}
			u, err := toUnstructured(ad)
			if err != nil {
				t.Fatal(err)
			}
			defs = append(defs, u)
		}
		roles, err := definitions.Roles(cat, testSource, defs)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range append(defs, roles...) {
			if err := c.Patch(ctx, o, client.Apply, client.FieldOwner("test"), client.ForceOwnership); err != nil {
				t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	})
	dyn := dynamic.NewForConfigOrDie(env.Config)
	for _, gvr := range []schema.GroupVersionResource{stalls, booths, escalators} {
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
		if k[1] == gvr.Resource {
			kind = k[0]
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
