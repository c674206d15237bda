package status

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/fluxcd/pkg/runtime/patch"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// TestWriteLandsFieldsBeforeConditions: a reader that sees the new Ready
// condition sees the status it describes (the CI run of d23ed47 read a
// Conflict condition with status.catalog still unset), and
// observedGeneration arrives with the conditions, not before them.
func TestWriteLandsFieldsBeforeConditions(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ps := &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: "demo", Generation: 1}}
	var patches []map[string]any
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ps).WithStatusSubresource(ps).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			data, err := p.Data(obj)
			if err != nil {
				return err
			}
			var body map[string]any
			if err := json.Unmarshal(data, &body); err != nil {
				return err
			}
			st, _ := body["status"].(map[string]any)
			patches = append(patches, st)
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		}}).Build()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(ps), ps); err != nil {
		t.Fatal(err)
	}
	patcher := patch.NewSerialPatcher(ps, c)
	ps.Status.Catalog = &v1alpha1.CatalogInfo{Name: "demo", Version: "1.0.0"}
	if err := (Writer{FieldOwner: "test"}).Write(context.Background(), patcher, ps, Result{State: StateStalled, Reason: "Conflict", Message: "taken"}); err != nil {
		t.Fatal(err)
	}
	catalogAt, conditionsAt, generationAt := -1, -1, -1
	for i, st := range patches {
		if _, ok := st["catalog"]; ok && catalogAt < 0 {
			catalogAt = i
		}
		if _, ok := st["conditions"]; ok && conditionsAt < 0 {
			conditionsAt = i
		}
		if _, ok := st["observedGeneration"]; ok && generationAt < 0 {
			generationAt = i
		}
	}
	if catalogAt < 0 || conditionsAt < 0 || generationAt < 0 {
		t.Fatalf("patches %v: want status.catalog, conditions and observedGeneration written", patches)
	}
	if catalogAt >= conditionsAt || generationAt < conditionsAt {
		t.Errorf("patch order: catalog #%d, conditions #%d, observedGeneration #%d; want catalog before conditions, observedGeneration not before them (patches %v)",
			catalogAt, conditionsAt, generationAt, patches)
	}
	var got v1alpha1.PackageSource
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(ps), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Catalog == nil || len(got.Status.Conditions) == 0 || got.Status.ObservedGeneration != 1 {
		t.Errorf("stored status %+v", got.Status)
	}
}
