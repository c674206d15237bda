package packagesourcereconciler

import (
	"context"
	"errors"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/operator/adinstaller"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/status"
)

// TestRefused: a check's error becomes a refusal for what the revision
// declares or claims, and stays an error (retried) otherwise.
func TestRefused(t *testing.T) {
	rev := revision("1.0.0", "")
	for _, tc := range []struct {
		name   string
		err    error
		reason string // "" for no refusal
		msg    string
		retry  bool
	}{
		{
			name: "no error passes",
		},
		{
			name:   "an API group held by another catalog",
			err:    &groupError{reason: v1alpha1.ReasonAPIGroupNotGranted, message: "names API group x.example"},
			reason: v1alpha1.ReasonAPIGroupNotGranted,
			msg:    "revision " + rev.Revision() + ": names API group x.example; none of its charts was published",
		},
		{
			name:   "an object of another owner",
			err:    &adinstaller.ConflictError{Objects: []string{"ApplicationDefinition x (PackageSource other)"}},
			reason: v1alpha1.ReasonConflict,
			msg:    "the definitions of " + rev.Revision() + ": ApplicationDefinition x (PackageSource other) already exist",
		},
		{
			name:   "what the artifact declares wrongly",
			err:    errors.Join(errBound, errors.New("definition y names chart z")),
			reason: v1alpha1.ReasonInvalidArtifact,
			msg:    "nothing of it was installed and none of its charts was published",
		},
		{
			name:  "a failing read is retried, not a refusal",
			err:   errors.New("connection refused"),
			retry: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := refused(rev, tc.err)
			if (err != nil) != tc.retry {
				t.Fatalf("error %v, want retry %v", err, tc.retry)
			}
			if tc.reason == "" {
				if res != nil {
					t.Fatalf("refusal %+v, want none", res)
				}
				return
			}
			if res == nil || res.State != status.StateStalled || res.Reason != tc.reason || !strings.Contains(res.Message, tc.msg) {
				t.Fatalf("refusal %+v, want Stalled %s with %q", res, tc.reason, tc.msg)
			}
		})
	}
}

// TestCheck is step 3 over a fake API: the first check that refuses
// decides, a failing read is an error (no refusal), and whether the
// declarations fit in the status is known even when an earlier check
// refused the revision.
func TestCheck(t *testing.T) {
	at := func(sec int64) metav1.Time { return metav1.Unix(sec, 0) }
	source := func(name string, created int64, catalog string) *v1alpha1.PackageSource {
		ps := &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at(created)}}
		if catalog != "" {
			ps.Status.Catalog = &v1alpha1.CatalogInfo{Name: catalog}
		}
		return ps
	}
	rev := func(catalog string, valuesBytes int) *artifact.Artifact {
		c := &artifact.Catalog{CatalogInfo: v1alpha1.CatalogInfo{Name: catalog, Version: "1.0.0"}}
		if valuesBytes > 0 {
			c.Variants = []v1alpha1.PackageVariant{{Name: "default", Components: []v1alpha1.PackageComponent{{
				Name: "big", Chart: "charts/big", Values: &apiextensionsv1.JSON{Raw: []byte(`"` + strings.Repeat("x", valuesBytes) + `"`)},
			}}}}
		}
		return &artifact.Artifact{Manifest: ocispec.Descriptor{Digest: digest.FromString(catalog)}, Catalog: c}
	}
	me := source("mine", 20, "")
	terminate := me.DeepCopy()
	terminate.Spec.KindRemoval = v1alpha1.KindRemovalTerminate
	// An ApplicationDefinition mine installed, of a kind the revision
	// drops, and one application of it.
	oldKind := &v1alpha1.ApplicationDefinition{ObjectMeta: metav1.ObjectMeta{Name: "old",
		Labels:      map[string]string{names.LabelPackageSource: names.LabelValue(me.Name)},
		Annotations: map[string]string{names.AnnotationPackageSource: me.Name}}}
	oldKind.Spec.Application.Kind = "Old"
	app := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "old-a", Namespace: "tenant-a",
		Labels: map[string]string{v1alpha1.LabelApplicationKind: "Old"}}}
	for _, tc := range []struct {
		name     string
		source   *v1alpha1.PackageSource // me when nil
		others   []client.Object
		rev      *artifact.Artifact
		listErr  bool
		reason   string // the refusal's, "" for none
		msg      string
		fits     bool
		wantErr  bool
		wantNone bool
		inUse    int
	}{
		{
			name:     "a catalog no one else serves passes",
			others:   []client.Object{source("other", 10, "beta")},
			rev:      rev("acme", 0),
			fits:     true,
			wantNone: true,
		},
		{
			name:   "a catalog name an older source serves is refused naming it",
			others: []client.Object{source("first", 10, "acme")},
			rev:    rev("acme", 0),
			reason: v1alpha1.ReasonConflict,
			msg:    "served by PackageSource first, created first",
			fits:   true,
		},
		{
			name:     "a catalog name a younger source serves is this one's",
			others:   []client.Object{source("later", 30, "acme")},
			rev:      rev("acme", 0),
			fits:     true,
			wantNone: true,
		},
		{
			name:   "declarations over the status bound are refused before the name is looked at",
			others: []client.Object{source("first", 10, "acme")},
			rev:    rev("acme", MaxStatusBytes+1),
			reason: v1alpha1.ReasonInvalidArtifact,
			msg:    "variants[0].components[0] (big)",
			fits:   false,
		},
		{
			name:   "a dropped kind still in use is refused naming it",
			others: []client.Object{oldKind, app},
			rev:    rev("acme", 0),
			reason: v1alpha1.ReasonKindInUse,
			msg:    "drops kind Old",
			fits:   true,
			inUse:  1,
		},
		{
			name:     "with kindRemoval Terminate a dropped kind in use passes and is kept for the message",
			source:   terminate,
			others:   []client.Object{oldKind, app},
			rev:      rev("acme", 0),
			fits:     true,
			wantNone: true,
			inUse:    1,
		},
		{
			name:    "a failing list is retried",
			rev:     rev("acme", 0),
			listErr: true,
			fits:    true,
			wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := me
			if tc.source != nil {
				ps = tc.source
			}
			b := fake.NewClientBuilder().WithScheme(controllermanager.Scheme()).WithObjects(append(tc.others, ps.DeepCopy())...)
			if tc.listErr {
				b = b.WithInterceptorFuncs(interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
					return errors.New("etcd is down")
				}})
			}
			c := b.Build()
			r := &Reconciler{Client: c, APIReader: c}
			cand, refusal, err := r.check(context.Background(), ps, tc.rev)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if len(cand.inUse) != tc.inUse {
				t.Errorf("kinds in use %v, want %d", cand.inUse, tc.inUse)
			}
			if cand.fits() != tc.fits {
				t.Errorf("fits %v, want %v", cand.fits(), tc.fits)
			}
			switch {
			case tc.wantErr || tc.wantNone:
				if refusal != nil {
					t.Fatalf("refusal %+v, want none", refusal)
				}
			case refusal == nil || refusal.Reason != tc.reason || !strings.Contains(refusal.Message, tc.msg):
				t.Fatalf("refusal %+v, want %s with %q", refusal, tc.reason, tc.msg)
			}
		})
	}
}
