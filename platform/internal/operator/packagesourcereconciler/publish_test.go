package packagesourcereconciler

import (
	"context"
	"errors"
	"sort"
	"testing"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/operator/names"
)

// fakeServer records what is published.
type fakeServer struct{ published map[string][]artifact.Chart }

func (f *fakeServer) Publish(source string, charts []artifact.Chart) {
	if f.published == nil {
		f.published = map[string][]artifact.Chart{}
	}
	f.published[source] = charts
}
func (f *fakeServer) Withdraw(source string) { delete(f.published, source) }
func (f *fakeServer) URL(source string, c artifact.Chart) string {
	return "http://charts.test/" + source + "/" + c.Descriptor.Digest.Encoded()
}

func chartLayer(path string) artifact.Chart {
	return artifact.Chart{Path: path, Name: path, Version: "1.0.0",
		Descriptor: ocispec.Descriptor{Digest: digest.FromString(path), Size: 42}}
}

// TestPublish is step 4's publishing as a table over a fake API (the
// controller-runtime fake client) and a fake chart server: one
// ExternalArtifact per component and application name, controlled by the
// source and pointing at the served chart; stale ones the source controls
// deleted; one it does not control never touched (errConflict).
func TestPublish(t *testing.T) {
	ps := &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: "acme", UID: types.UID("uid-acme")}}
	rev := &artifact.Artifact{
		Catalog: &artifact.Catalog{
			Variants:     []v1alpha1.PackageVariant{{Name: "default", Components: []v1alpha1.PackageComponent{{Name: "web", Chart: "charts/web"}}}},
			Applications: []v1alpha1.PackageApplication{{Name: "db", Chart: "charts/db"}},
		},
		Charts: []artifact.Chart{chartLayer("charts/web"), chartLayer("charts/db")},
	}
	owned := func(name string) *sourcev1.ExternalArtifact {
		return &sourcev1.ExternalArtifact{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: v1alpha1.SystemNamespace,
			Labels:          map[string]string{names.LabelPackageSource: names.LabelValue(ps.Name)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "PackageSource", Name: ps.Name, UID: ps.UID, Controller: ptr.To(true)}}}}
	}
	foreign := func(name string) *sourcev1.ExternalArtifact {
		return &sourcev1.ExternalArtifact{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: v1alpha1.SystemNamespace,
			Labels:      map[string]string{names.LabelPackageSource: names.LabelValue(ps.Name)},
			Annotations: map[string]string{names.AnnotationPackageSource: ps.Name}}}
	}
	web, db := v1alpha1.ComponentArtifactName(ps.Name, "web"), v1alpha1.ComponentArtifactName(ps.Name, "db")
	stale := v1alpha1.ComponentArtifactName(ps.Name, "old")
	pkg := func(name, source string, components map[string]v1alpha1.PackageComponentSettings) *v1alpha1.Package {
		return &v1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.PackageSpec{SourceRef: v1alpha1.PackageSourceReference{Name: source}, Components: components}}
	}
	// A component's chart is published only while a Package of the source
	// enables it (demand.go); the application's always.
	enables := pkg("acme", ps.Name, nil)
	for _, tc := range []struct {
		name     string
		reason   string
		existing []client.Object
		conflict bool
		want     []string // ExternalArtifacts in cozy-system afterwards
	}{
		{
			name:     "a first publish",
			reason:   "a first publish serves the application's chart and each enabled component's",
			existing: []client.Object{enables},
			want:     []string{db, web},
		},
		{
			name:     "a stale one of the source goes",
			reason:   "a stale artifact of the source is deleted",
			existing: []client.Object{enables, owned(stale), owned(web)},
			want:     []string{db, web},
		},
		{
			name:     "one the source does not control is left alone",
			reason:   "an artifact the source does not control is left alone, and reported as a conflict",
			existing: []client.Object{enables, foreign(web), foreign(stale)},
			conflict: true,
			want:     []string{db, stale, web},
		},
		{
			name:   "no Package: the application's chart only",
			reason: "without a Package only the application's chart is published",
			want:   []string{db},
		},
		{
			name:     "no Package any more: the component's goes",
			reason:   "a component's artifact goes when no Package enables it any more",
			existing: []client.Object{owned(web)},
			want:     []string{db},
		},
		{
			name:     "a Package of another source",
			reason:   "a Package of another source enables nothing of this one",
			existing: []client.Object{pkg("other", "other", nil)},
			want:     []string{db},
		},
		{
			name:     "a Package of another variant",
			reason:   "a Package of another variant does not enable this variant's components",
			existing: []client.Object{func() *v1alpha1.Package { p := pkg("v", ps.Name, nil); p.Spec.Variant = "big"; return p }()},
			want:     []string{db},
		},
		{
			name:   "a Package that turns the component off",
			reason: "a Package turning a component off withdraws its chart",
			existing: []client.Object{owned(web), pkg("off", ps.Name,
				map[string]v1alpha1.PackageComponentSettings{"web": {Enabled: ptr.To(false)}})},
			want: []string{db},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tc.name, tc.reason)
				}
			})
			c := fake.NewClientBuilder().WithScheme(controllermanager.Scheme()).
				WithStatusSubresource(&sourcev1.ExternalArtifact{}).WithObjects(tc.existing...).Build()
			srv := &fakeServer{}
			r := &Reconciler{Client: c, Server: srv}
			err := r.publish(context.Background(), ps, rev)
			if got := errors.Is(err, errConflict); got != tc.conflict {
				t.Fatalf("publish: %v; conflict %v, want %v", err, got, tc.conflict)
			}
			if !tc.conflict && err != nil {
				t.Fatal(err)
			}
			if len(srv.published[ps.Name]) != 2 {
				t.Errorf("charts served: %v, want both", srv.published)
			}
			var list sourcev1.ExternalArtifactList
			if err := c.List(context.Background(), &list, client.InNamespace(v1alpha1.SystemNamespace)); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ea := range list.Items {
				got = append(got, ea.Name)
				if !metav1.IsControlledBy(&ea, ps) {
					if ea.Status.Artifact != nil {
						t.Errorf("%s, not the source's, got a status: %+v", ea.Name, ea.Status.Artifact)
					}
					continue
				}
				chart := "charts/web"
				if ea.Name == db {
					chart = "charts/db"
				}
				want := srv.URL(ps.Name, chartLayer(chart))
				if ea.Status.Artifact == nil || ea.Status.Artifact.URL != want || ea.Status.Artifact.Digest != digest.FromString(chart).String() {
					t.Errorf("%s status artifact %+v, want %s", ea.Name, ea.Status.Artifact, want)
				}
			}
			sort.Strings(got)
			sort.Strings(tc.want)
			if len(got) != len(tc.want) {
				t.Fatalf("ExternalArtifacts %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("ExternalArtifacts %v, want %v", got, tc.want)
				}
			}
		})
	}
}
