package adinstaller_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/install"
	"cozystack.io/platform/internal/operator/adinstaller"
	"cozystack.io/sdk/testenv"
)

// TestInstallForADeletedSource: a reconcile that read its PackageSource
// from a cache that had not yet seen the source's deletion installs its
// definitions anyway. A definition a person deleted after deleting the
// source was re-created that way, with nothing left to delete it, so the
// catalog's grants (and its installers in every tenant namespace) stayed
// for good. InstallForSource withdraws what such a pass created and
// keeps what existed before it (a deleted source keeps its kinds).
func TestInstallForADeletedSource(t *testing.T) {
	testenv.Need(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := install.CRDs(ctx, env.Config, ""); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: controllermanager.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ps := &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: "stale"},
		Spec: v1alpha1.PackageSourceSpec{OCI: &v1alpha1.OCISource{Repository: "127.0.0.1:1/stale", Tag: "1.0.0"}}}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	kept, deleted, added := ad("stalekept", "Stalekept", "stalekepts"), ad("staledeleted", "Staledeleted", "staledeleteds"), ad("staleadded", "Staleadded", "staleaddeds")
	first := []*unstructured.Unstructured{kept, deleted}
	if _, err := adinstaller.InstallForSource(ctx, c, c, ps, first); err != nil {
		t.Fatalf("install while the source exists: %v", err)
	}
	keptBefore, err := get(t, kept)
	if err != nil {
		t.Fatal(err)
	}

	// The source is deleted, then one of its definitions.
	if err := c.Delete(ctx, ps.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, deleted.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, o := range []*unstructured.Unstructured{kept, deleted, added} {
			_ = c.Delete(context.Background(), o.DeepCopy())
		}
	})

	// A pass with the source as the cache still holds it, serving a
	// revision with one more kind.
	res, err := adinstaller.InstallForSource(ctx, c, c, ps, []*unstructured.Unstructured{kept, deleted, added})
	if !errors.Is(err, adinstaller.ErrSourceGone) {
		t.Errorf("install for a deleted source: %v, want ErrSourceGone", err)
	}
	for _, o := range []*unstructured.Unstructured{deleted, added} {
		if _, err := get(t, o); !apierrors.IsNotFound(err) {
			t.Errorf("ApplicationDefinition %s after a pass for a deleted source: %v, want it not there (the pass created it)", o.GetName(), err)
		}
	}
	for _, want := range []string{"ApplicationDefinition staledeleted", "ApplicationDefinition staleadded"} {
		if !slices.Contains(res.Deleted, want) {
			t.Errorf("Deleted %v, want it to name %s", res.Deleted, want)
		}
	}
	keptAfter, err := get(t, kept)
	if err != nil || keptAfter.GetUID() != keptBefore.GetUID() {
		t.Errorf("ApplicationDefinition %s, installed before the source was deleted: %v (uid %s, was %s), want it kept", kept.GetName(), err, keptAfter.GetUID(), keptBefore.GetUID())
	}
}
