package packagesourcereconciler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/platform/internal/operator/requirements"
	"cozystack.io/platform/internal/status"
)

// fakeTarget resolves every reference to one manifest (or fails).
type fakeTarget struct {
	desc ocispec.Descriptor
	err  error
}

func (f fakeTarget) Resolve(context.Context, string) (ocispec.Descriptor, error) {
	return f.desc, f.err
}
func (f fakeTarget) Fetch(context.Context, ocispec.Descriptor) (io.ReadCloser, error) {
	return nil, errors.New("the fake target holds no blobs")
}
func (f fakeTarget) Exists(context.Context, ocispec.Descriptor) (bool, error) { return false, nil }

var _ oras.ReadOnlyTarget = fakeTarget{}

// fakeStore pulls what it is told to and counts the calls.
type fakeStore struct {
	pulled   *artifact.Artifact
	pullErr  error
	pulls    int
	discards int
}

func (f *fakeStore) Pull(context.Context, string, oras.ReadOnlyTarget, string) (*artifact.Artifact, error) {
	f.pulls++
	return f.pulled, f.pullErr
}
func (f *fakeStore) Load(context.Context, digest.Digest) (*artifact.Artifact, error) {
	return nil, errors.New("not kept")
}
func (f *fakeStore) Serve(context.Context, string, ocispec.Descriptor) error { return nil }
func (f *fakeStore) Discard(context.Context, string) error                   { f.discards++; return nil }
func (f *fakeStore) Forget(context.Context, string) error                    { return nil }

func revision(version, minPlatform string) *artifact.Artifact {
	d := digest.FromString(version + minPlatform)
	return &artifact.Artifact{
		Manifest: ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: d, Size: 1},
		Catalog:  &artifact.Catalog{CatalogInfo: v1alpha1.CatalogInfo{Name: "acme", Version: version, MinPlatformVersion: minPlatform}},
	}
}

// TestFetch is step 2 (fetch and verify) as a table over fake origins and
// stores: no registry, no cluster. What is pulled, refused, retried and
// reported; a revision refused for what it is is not pulled again.
func TestFetch(t *testing.T) {
	served := revision("1.0.0", "0.1.0")
	next := revision("2.0.0", "0.1.0")
	tooNew := revision("3.0.0", "99.0.0")
	for _, tc := range []struct {
		name      string
		reason    string
		served    *artifact.Artifact
		resolve   fakeTarget
		store     fakeStore
		want      status.Result // State and Reason; Message holds each of msg
		msg       []string
		fresh     bool // a new revision is returned
		pulls     int  // after two fetches
		discards  int
		openError error
	}{
		{
			name:      "the origin cannot be opened",
			reason:    "an origin that cannot be opened is a pull failure, saying nothing is served yet",
			openError: errors.New("spec.layout.path /x: no such file"),
			want:      status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonPullFailed},
			msg:       []string{"/x", "nothing is served yet"},
		},
		{
			name:    "resolve fails, the served revision stays",
			reason:  "a failed resolve keeps the served revision, and the message says so",
			served:  served,
			resolve: fakeTarget{err: errors.New("connection refused")},
			want:    status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonPullFailed},
			msg:     []string{"resolve reg/acme:1", "connection refused", "still serving the last good revision 1.0.0@"},
		},
		{
			name:    "the served digest: nothing pulled",
			reason:  "a resolve to the served digest pulls nothing",
			served:  served,
			resolve: fakeTarget{desc: served.Manifest},
			want:    status.Result{State: status.StateReady, Reason: v1alpha1.ReasonArtifactReady},
			msg:     []string{"serving catalog acme 1.0.0"},
		},
		{
			name:    "a new revision",
			reason:  "a new digest is pulled and served as a new revision",
			served:  served,
			resolve: fakeTarget{desc: next.Manifest},
			store:   fakeStore{pulled: next},
			want:    status.Result{State: status.StateReady, Reason: v1alpha1.ReasonArtifactReady},
			msg:     []string{"serving catalog acme 2.0.0"},
			fresh:   true,
			pulls:   2,
		},
		{
			name:    "a transient pull failure is retried",
			reason:  "a transient pull failure is retried",
			served:  served,
			resolve: fakeTarget{desc: next.Manifest},
			store:   fakeStore{pullErr: errors.New("EOF")},
			want:    status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonPullFailed},
			msg:     []string{"pull reg/acme:1: EOF"},
			pulls:   2,
		},
		{
			name:    "a digest mismatch is retried",
			reason:  "a digest mismatch is retried, but reported as stalled: the artifact is corrupt or tampered with",
			resolve: fakeTarget{desc: next.Manifest},
			store:   fakeStore{pullErr: &artifact.DigestMismatchError{Blob: "manifest", Expected: next.Manifest.Digest, Actual: digest.FromString("x")}},
			want:    status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonDigestMismatch},
			msg:     []string{"corrupt or tampered with"},
			pulls:   2,
		},
		{
			name:    "an invalid artifact is not pulled again",
			reason:  "an invalid artifact is not pulled again until the tag moves",
			served:  served,
			resolve: fakeTarget{desc: next.Manifest},
			store:   fakeStore{pullErr: fmt.Errorf("%w: config: kind: Unsupported value", artifact.ErrInvalidArtifact)},
			want:    status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonInvalidArtifact},
			msg:     []string{"cozypkg build", "is not pulled again until the tag moves"},
			pulls:   1,
		},
		{
			name:     "a catalog for a newer platform is discarded and not pulled again",
			reason:   "a catalog for a newer platform is discarded and not pulled again",
			resolve:  fakeTarget{desc: tooNew.Manifest},
			store:    fakeStore{pulled: tooNew},
			want:     status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonRequirementsNotMet},
			msg:      []string{"99.0.0", "is not pulled again"},
			pulls:    1,
			discards: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tc.name, tc.reason)
				}
			})
			store := tc.store
			r := &Reconciler{Store: &store, Platform: requirements.Platform{Version: "1.0.0"},
				Open: func(context.Context, client.Reader, v1alpha1.PackageSourceSpec) (*Origin, error) {
					if tc.openError != nil {
						return nil, tc.openError
					}
					return &Origin{Target: tc.resolve, Reference: "1", Display: "reg/acme:1"}, nil
				}}
			ps := &v1alpha1.PackageSource{}
			tries := &attempts{}
			var res status.Result
			var fresh *artifact.Artifact
			for range 2 { // the second fetch shows what is retried
				fresh, res = r.fetch(context.Background(), ps, tc.served, tries)
			}
			if res.State != tc.want.State || res.Reason != tc.want.Reason {
				t.Errorf("result %d/%s, want %d/%s (%s)", res.State, res.Reason, tc.want.State, tc.want.Reason, res.Message)
			}
			for _, m := range tc.msg {
				if !strings.Contains(res.Message, m) {
					t.Errorf("message %q lacks %q", res.Message, m)
				}
			}
			if (fresh != nil) != tc.fresh {
				t.Errorf("new revision %v, want %v", fresh != nil, tc.fresh)
			}
			if store.pulls != tc.pulls || store.discards != tc.discards {
				t.Errorf("pulls %d, discards %d; want %d, %d", store.pulls, store.discards, tc.pulls, tc.discards)
			}
		})
	}
}
