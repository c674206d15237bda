package application

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/registry/rest"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/appkinds"
)

// catalogKind is the storage kind served by ApplicationDefinition def of
// PackageSource source (release.source and .component).
func catalogKind(t *testing.T, def, source string) *appkinds.Kind {
	ad := postgresAD(storageSchema)
	ad.Name = def
	ad.Spec.Release.ChartRef = nil
	ad.Spec.Release.Source, ad.Spec.Release.Component = source, "postgres"
	return compileKind(t, ad)
}

// TestApplicationNeverSwitchesCatalog (K1 "Who serves a kind", contracts/schemas/v1alpha1/k1-application.md): when another
// catalog's definition comes to serve a kind, an existing application
// keeps its chart and installer: writes are Forbidden with the command
// that hands it over, reads and deletes work; once a cluster
// administrator annotates its HelmRelease, the next write moves it and
// spends the annotation. A definition of the same catalog (a renamed
// definition) moves it without a handover.
func TestApplicationNeverSwitchesCatalog(t *testing.T) {
	f := newFixture(t, catalogKind(t, "postgres", "services"))
	f.create("main", `{spec: {size: 1Gi}}`)
	before := f.mustHelmRelease("main")
	if before.Spec.ServiceAccountName != v1alpha1.CatalogInstallerServiceAccount("services") {
		t.Fatalf("serviceAccountName %q", before.Spec.ServiceAccountName)
	}
	update := func(r *REST, size string) error {
		app := f.get("main")
		_ = unstructured.SetNestedField(app.Object, size, "spec", "size")
		_, _, err := r.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(app), nil, nil, false, &metav1.UpdateOptions{})
		return err
	}

	// The same catalog, another definition: no handover needed.
	renamed := NewREST(catalogKind(t, "postgresql", "services"), Backend{Client: f.c, Lister: newLister(t)})
	if err := update(renamed, "2Gi"); err != nil {
		t.Fatalf("update through the catalog's renamed definition: %v", err)
	}

	// Another catalog's definition: refused, nothing changes.
	squatter := NewREST(catalogKind(t, "pg-squat", "squatter"), Backend{Client: f.c, Lister: newLister(t)})
	err := update(squatter, "3Gi")
	if !apierrors.IsForbidden(err) {
		t.Fatalf("update through another catalog's definition: %v, want Forbidden", err)
	}
	for _, want := range []string{"never moves to another catalog's chart", "cozy-installer-services", "cozy-installer-squatter",
		"kubectl annotate helmrelease -n " + f.ns + " postgres-main " + AnnotationHandover + "=pg-squat"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
	hr := f.mustHelmRelease("main")
	if hr.Spec.ChartRef.Name != before.Spec.ChartRef.Name || hr.Spec.ServiceAccountName != before.Spec.ServiceAccountName || values(t, hr)["size"] != "2Gi" {
		t.Errorf("the refused write changed the HelmRelease: chart %s, identity %s, values %v", hr.Spec.ChartRef.Name, hr.Spec.ServiceAccountName, values(t, hr))
	}
	if _, err := squatter.Get(f.ctx, "main", &metav1.GetOptions{}); err != nil {
		t.Errorf("read through the new definition: %v", err)
	}

	// The tenant cannot hand its application over itself: the key is the
	// platform's (contract K1, "Metadata the platform owns").
	app := f.get("main")
	app.SetAnnotations(map[string]string{AnnotationHandover: "pg-squat"})
	_, _, err = squatter.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(app), nil, nil, false, &metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), AnnotationHandover) {
		t.Fatalf("a tenant's own handover: %v, want 422 naming the annotation", err)
	}

	// A handover naming another definition does not count.
	hr.Annotations = map[string]string{AnnotationHandover: "postgresql"}
	if err := f.c.Update(context.Background(), hr); err != nil {
		t.Fatal(err)
	}
	if err := update(squatter, "3Gi"); !apierrors.IsForbidden(err) {
		t.Fatalf("handover to another definition: %v, want Forbidden", err)
	}

	// The administrator's handover: the write moves the application.
	hr = f.mustHelmRelease("main")
	hr.Annotations[AnnotationHandover] = "pg-squat"
	if err := f.c.Update(context.Background(), hr); err != nil {
		t.Fatal(err)
	}
	if err := update(squatter, "3Gi"); err != nil {
		t.Fatalf("update after the handover: %v", err)
	}
	hr = f.mustHelmRelease("main")
	if hr.Spec.ChartRef.Name != v1alpha1.ComponentArtifactName("squatter", "postgres") || hr.Spec.ServiceAccountName != v1alpha1.CatalogInstallerServiceAccount("squatter") {
		t.Errorf("after the handover: chart %s, identity %s", hr.Spec.ChartRef.Name, hr.Spec.ServiceAccountName)
	}
	if _, ok := hr.Annotations[AnnotationHandover]; ok {
		t.Errorf("the handover annotation was not spent: %v", hr.Annotations)
	}

	// Deleting is never refused.
	if _, _, err := f.rest.Delete(f.ctx, "main", nil, &metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete: %v", err)
	}
}
