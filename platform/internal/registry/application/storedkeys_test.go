package application

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"

	"cozystack.io/platform/internal/apiserver/appkinds"
)

// Version 1 of a kind, and version 2 as a catalog upgrade makes it:
// maxMemory renamed memoryLimit, users[].colour removed, replicas
// narrowed.
const (
	storedKeysV1 = `{"type":"object","properties":{
  "maxMemory":{"type":"string"},
  "replicas":{"type":"integer","default":1},
  "users":{"type":"object","additionalProperties":{"type":"object","properties":{"password":{"type":"string"},"colour":{"type":"string"}}}}}}`
	storedKeysV2 = `{"type":"object","properties":{
  "memoryLimit":{"type":"string","default":"64Mi"},
  "replicas":{"type":"integer","default":1,"maximum":3},
  "users":{"type":"object","additionalProperties":{"type":"object","properties":{"password":{"type":"string"}}}}}}`
)

// storedKeysKind is the kind of schema at generation, shipped by the
// PackageSource databases.
func storedKeysKind(t *testing.T, schema string, generation int64) *appkinds.Kind {
	ad := postgresAD(schema)
	ad.Generation = generation
	ad.Spec.Release.Source = "databases"
	return compileKind(t, ad)
}

// upgrade makes the fixture serve kind version 2 (storedKeysV2), as
// cozystack-api does when the ApplicationDefinition changes.
func (f *fixture) upgrade(t *testing.T) {
	f.kind = storedKeysKind(t, storedKeysV2, 2)
	f.rest = NewREST(f.kind, Backend{Client: f.c, Lister: newLister(t)})
}

// A value stored under a key the kind's schema no longer declares is
// shown by get, list and watch, and never dropped by a write: a write
// still carrying it is refused with 422 naming it under every field
// validation directive, and the stored values stay as they were; a write
// setting it to null, or leaving it out, removes it (contract K4, "Stored
// values", contracts/schemas/v1alpha1/k4-values.md).
func TestStoredKeys(t *testing.T) {
	f := newFixture(t, storedKeysKind(t, storedKeysV1, 1))
	f.create("cache", `spec: {maxMemory: 128Mi, users: {app: {password: x, colour: red}}}`)
	f.create("wide", `spec: {replicas: 5}`)
	f.upgrade(t)
	before := f.mustHelmRelease("cache")
	storedKeys := []string{"spec.maxMemory", "spec.users[app].colour"}

	// Reads show them; get warns about each.
	ctx, rec := withWarnings(f.ctx)
	got, err := f.rest.Get(ctx, "cache", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkStoredSpec(t, "get", got.(*unstructured.Unstructured))
	if w := rec.warnings(); len(w) != 2 || !strings.HasPrefix(w[0], "spec.maxMemory is stored, but the current schema of Postgres (ApplicationDefinition postgres, generation 2, PackageSource databases) no longer declares it") ||
		!strings.HasPrefix(w[1], "spec.users[app].colour is stored") {
		t.Errorf("get warnings %q, want one naming each stored key and the definition", w)
	}
	list, err := f.rest.List(f.ctx, &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range list.(*List).UnstructuredContent()["items"].([]any) {
		if u := (&unstructured.Unstructured{Object: item.(map[string]any)}); u.GetName() == "cache" {
			checkStoredSpec(t, "list", u)
		}
	}
	w, err := f.rest.Watch(f.ctx, &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for seen := false; !seen; {
		select {
		case ev := <-w.ResultChan():
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Added && u.GetName() == "cache" {
				checkStoredSpec(t, "watch", u)
				seen = true
			}
		case <-timeout:
			t.Fatal("the watch never sent cache")
		}
	}
	w.Stop()

	// An unrelated edit that keeps them is refused, whatever the
	// directive, and nothing is written.
	for _, directive := range []string{metav1.FieldValidationStrict, metav1.FieldValidationWarn, "", metav1.FieldValidationIgnore} {
		u := f.get("cache")
		_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "replicas")
		_, _, err := f.rest.Update(f.ctx, "cache", rest.DefaultUpdatedObjectInfo(u), nil, nil, false, &metav1.UpdateOptions{FieldValidation: directive})
		if got := causes(t, err); !slices.Equal(got, storedKeys) {
			t.Errorf("directive %q: causes %v, want %v", directive, got, storedKeys)
		}
		if directive == "" {
			t.Logf("refused: %v", err)
		}
		for _, want := range []string{
			`spec.maxMemory: Invalid value: "128Mi": stored in this Postgres, but the current schema of the kind (ApplicationDefinition postgres, generation 2, PackageSource databases) no longer declares it`,
			`kubectl patch postgres cache -n ` + f.ns + ` --type merge -p '{"spec":{"maxMemory":null}}'`,
			`'{"spec":{"users":{"app":{"colour":null}}}}'`,
			"move its value to the key that replaced it in the same request",
			`keep the key one more version with "deprecated": true (contracts/schemas/v1alpha1/k4-values.md, "Stored values")`,
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("directive %q: error %q lacks %q", directive, err, want)
			}
		}
	}
	// A change of metadata alone keeps them too, so it is refused as well.
	u := f.get("cache")
	u.SetLabels(map[string]string{"team": "cache"})
	_, _, err = f.rest.Update(f.ctx, "cache", rest.DefaultUpdatedObjectInfo(u), nil, nil, false, &metav1.UpdateOptions{})
	if got := causes(t, err); !slices.Equal(got, storedKeys) {
		t.Errorf("label change: causes %v, want %v", got, storedKeys)
	}
	if after := f.mustHelmRelease("cache"); after.ResourceVersion != before.ResourceVersion || string(after.Spec.Values.Raw) != string(before.Spec.Values.Raw) {
		t.Errorf("a refused write changed the HelmRelease: values %s, want %s", after.Spec.Values.Raw, before.Spec.Values.Raw)
	}

	// The move, in one request: maxMemory set to null and its value under
	// memoryLimit; colour left out.
	u = f.get("cache")
	spec := u.Object["spec"].(map[string]any)
	spec["maxMemory"] = nil
	spec["memoryLimit"] = "128Mi"
	delete(spec["users"].(map[string]any)["app"].(map[string]any), "colour")
	ctx, rec = withWarnings(f.ctx)
	if _, _, err := f.rest.Update(ctx, "cache", rest.DefaultUpdatedObjectInfo(u), nil, nil, false, &metav1.UpdateOptions{FieldValidation: metav1.FieldValidationStrict}); err != nil {
		t.Fatalf("the update moving maxMemory to memoryLimit: %v", err)
	}
	if w := rec.warnings(); len(w) > 0 {
		t.Errorf("warnings %q for a write that removes stored keys knowingly", w)
	}
	want := map[string]any{"memoryLimit": "128Mi", "users": map[string]any{"app": map[string]any{"password": "x"}}}
	if diff := cmp.Diff(want, values(t, f.mustHelmRelease("cache"))); diff != "" {
		t.Errorf("values after the move (-want +got):\n%s", diff)
	}

	// A stored value the new schema narrowed is refused the same way,
	// naming the field and the bound.
	u = f.get("wide")
	u.SetLabels(map[string]string{"team": "cache"})
	_, _, err = f.rest.Update(f.ctx, "wide", rest.DefaultUpdatedObjectInfo(u), nil, nil, false, &metav1.UpdateOptions{})
	if got := causes(t, err); !slices.Equal(got, []string{"spec.replicas"}) || !strings.Contains(err.Error(), "spec.replicas: Invalid value: 5: maximum: got 5, want 3") {
		t.Errorf("narrowed value: %v (causes %v), want 422 on spec.replicas naming the maximum", err, got)
	}
	if v := values(t, f.mustHelmRelease("wide")); v["replicas"] != float64(5) {
		t.Errorf("values of wide = %v, want replicas 5 kept", v)
	}
}

// checkStoredSpec fails unless app's spec shows the values stored under
// version 1's keys.
func checkStoredSpec(t *testing.T, read string, app *unstructured.Unstructured) {
	t.Helper()
	mem, _, _ := unstructured.NestedString(app.Object, "spec", "maxMemory")
	colour, _, _ := unstructured.NestedString(app.Object, "spec", "users", "app", "colour")
	if mem != "128Mi" || colour != "red" {
		raw, _ := json.Marshal(app.Object["spec"])
		t.Errorf("%s shows spec %s, want maxMemory 128Mi and users.app.colour red", read, raw)
	}
}

// Keys new in a write still follow its directive while the stored ones are
// refused; a create is unchanged.
func TestStoredKeysBesideNewUnknownKeys(t *testing.T) {
	f := newFixture(t, storedKeysKind(t, storedKeysV1, 1))
	f.create("cache", `spec: {maxMemory: 128Mi}`)
	f.upgrade(t)
	u := f.get("cache")
	spec := u.Object["spec"].(map[string]any)
	spec["maxMemory"] = nil
	spec["typo"] = true
	ctx, rec := withWarnings(f.ctx)
	if _, _, err := f.rest.Update(ctx, "cache", rest.DefaultUpdatedObjectInfo(u.DeepCopy()), nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`unknown field "spec.typo"`}, rec.warnings()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if v := values(t, f.mustHelmRelease("cache")); len(v) != 0 {
		t.Errorf("values = %v, want none (maxMemory dropped knowingly, typo pruned)", v)
	}
	ctx, rec = withWarnings(f.ctx)
	if _, err := f.rest.Create(ctx, f.newApp("fresh", `spec: {maxMemory: 1Gi}`), nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`unknown field "spec.maxMemory"`}, rec.warnings()); diff != "" {
		t.Errorf("create warnings (-want +got):\n%s", diff)
	}
	if _, err := f.rest.Create(f.ctx, f.newApp("strict", `spec: {maxMemory: 1Gi}`), nil, &metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}); !apierrors.IsInvalid(err) {
		t.Errorf("strict create with an unknown key: %v, want 422", err)
	}
}
