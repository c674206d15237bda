package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/adfixtures"
)

// Every upstream ApplicationDefinition is served: its kind is in discovery,
// and an object built from its schema's defaults goes through create, list,
// Table, update, server-side apply, watch and delete through kube-apiserver,
// with the HelmRelease K1 describes.
func TestAllUpstreamKinds(t *testing.T) {
	startServer(t)
	ctx := context.Background()
	ads := adfixtures.All(t)
	for _, ad := range ads {
		if err := backend.Create(ctx, ad.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, ad := range ads {
		waitDiscovered(t, ad.Spec.Application.Plural, 10*time.Second)
	}
	ns := "e2e-all-kinds"
	if _, err := env.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(env.Config)
	for _, ad := range ads {
		app := ad.Spec.Application
		t.Run(app.Kind, func(t *testing.T) {
			gvr := schema.GroupVersionResource{Group: "apps.cozystack.io", Version: "v1alpha1", Resource: app.Plural}
			res := dyn.Resource(gvr).Namespace(ns)
			w, err := res.Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()

			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apps.cozystack.io/v1alpha1", "kind": app.Kind,
				"metadata": map[string]any{"name": "e2e"}, "spec": map[string]any{},
			}}
			created, err := res.Create(ctx, obj, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create from schema defaults: %v", err)
			}
			expectEvent(t, w, watch.Added, "e2e")

			var hr helmv2.HelmRelease
			if err := backend.Get(ctx, client.ObjectKey{Namespace: ns, Name: ad.Spec.Release.Prefix + "e2e"}, &hr); err != nil {
				t.Fatalf("HelmRelease %s: %v", ad.Spec.Release.Prefix+"e2e", err)
			}
			checkHelmRelease(t, ad, &hr)

			list, err := res.List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != 1 {
				t.Fatalf("list: %v (%d items)", err, len(list.Items))
			}
			table := getTable(t, app.Plural, ns)
			if len(table.Rows) != 1 || len(table.ColumnDefinitions) < 5 {
				t.Errorf("table: %d rows, %d columns", len(table.Rows), len(table.ColumnDefinitions))
			}

			created.SetLabels(map[string]string{"updated": "yes"})
			if _, err := res.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("update: %v", err)
			}
			expectEvent(t, w, watch.Modified, "e2e")
			patch := fmt.Sprintf(`{"apiVersion":"apps.cozystack.io/v1alpha1","kind":%q,"metadata":{"name":"e2e","labels":{"applied":"yes"}}}`, app.Kind)
			applied, err := res.Patch(ctx, "e2e", types.ApplyPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "e2e-test"})
			if err != nil {
				t.Fatalf("server-side apply: %v", err)
			}
			if applied.GetLabels()["applied"] != "yes" || applied.GetLabels()["updated"] != "yes" {
				t.Errorf("labels after apply = %v", applied.GetLabels())
			}
			if !hasManager(applied, "e2e-test") {
				t.Errorf("managedFields lack the applier: %v", applied.GetManagedFields())
			}
			expectEvent(t, w, watch.Modified, "e2e")

			if err := res.Delete(ctx, "e2e", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			expectEvent(t, w, watch.Deleted, "e2e")
		})
	}
}

func checkHelmRelease(t *testing.T, ad *v1alpha1.ApplicationDefinition, hr *helmv2.HelmRelease) {
	t.Helper()
	wantLabels := map[string]string{
		"apps.cozystack.io/application.kind":  ad.Spec.Application.Kind,
		"apps.cozystack.io/application.group": "apps.cozystack.io",
		"apps.cozystack.io/application.name":  "e2e",
	}
	for k, v := range ad.Spec.Release.Labels {
		wantLabels[k] = v
	}
	for k, v := range wantLabels {
		if hr.Labels[k] != v {
			t.Errorf("HelmRelease label %s = %q, want %q", k, hr.Labels[k], v)
		}
	}
	ref := ad.Spec.Release.ChartRef
	if hr.Spec.ChartRef == nil || hr.Spec.ChartRef.Kind != ref.Kind || hr.Spec.ChartRef.Name != ref.Name || hr.Spec.ChartRef.Namespace != ref.Namespace {
		t.Errorf("chartRef = %+v, want %+v", hr.Spec.ChartRef, ref)
	}
	if len(hr.Spec.ValuesFrom) != 1 || hr.Spec.ValuesFrom[0].Kind != "ConfigMap" || hr.Spec.ValuesFrom[0].Name != "cozystack-values" || hr.Spec.ValuesFrom[0].Optional {
		t.Errorf("valuesFrom = %+v, want the non-optional ConfigMap cozystack-values", hr.Spec.ValuesFrom)
	}
	// The object was created with an empty spec: no defaults are stored.
	if hr.Spec.Values != nil && string(hr.Spec.Values.Raw) != "{}" {
		t.Errorf("values = %s, want none (the user's spec was empty)", hr.Spec.Values.Raw)
	}
}

func hasManager(u *unstructured.Unstructured, manager string) bool {
	for _, m := range u.GetManagedFields() {
		if m.Manager == manager {
			return true
		}
	}
	return false
}

func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed waiting for %s %s", typ, name)
			}
			u, isApp := ev.Object.(*unstructured.Unstructured)
			if ev.Type == typ && isApp && u.GetName() == name {
				return
			}
		case <-timeout:
			t.Fatalf("no %s event for %s within 10s", typ, name)
		}
	}
}

// getTable reads a list as kubectl does, as a meta.k8s.io Table.
func getTable(t *testing.T, plural, ns string) *metav1.Table {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.GroupVersion = &schema.GroupVersion{Group: "apps.cozystack.io", Version: "v1alpha1"}
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rc.Get().Namespace(ns).Resource(plural).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("get %s as Table: %v", plural, err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil || table.Kind != "Table" {
		t.Fatalf("not a Table (%v): %s", err, strings.TrimSpace(string(raw))[:min(200, len(raw))])
	}
	return &table
}
