package artifact_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/contracts/artifact/safetar"
)

// buildLayout builds the test catalog into a fresh OCI layout directory.
func buildLayout(t *testing.T) (string, *build.Result) {
	t.Helper()
	dir := t.TempDir()
	store, err := oci.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(context.Background(), testCatalog, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, res
}

func blobPath(dir string, d digest.Digest) string {
	return filepath.Join(dir, "blobs", d.Algorithm().String(), d.Encoded())
}

func openLayout(t *testing.T, dir string) oras.ReadOnlyTarget {
	t.Helper()
	store, err := oci.NewFromFS(context.Background(), os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// A blob changed on disk after the build: Pull names the blob and both
// digests, and stores nothing under the manifest's digest.
func TestPullDetectsTamperedBlobs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reason string
		blob   func(res *build.Result) ocispec.Descriptor
		tamper func(data []byte) []byte
		what   string
	}{
		{
			name:   "chart bytes changed",
			reason: "a chart layer is checked against its digest before it is used or stored",
			blob:   func(res *build.Result) ocispec.Descriptor { return res.Charts[0].Descriptor },
			tamper: func(data []byte) []byte { data[len(data)/2] ^= 0xff; return data },
			what:   "chart charts/echo",
		},
		{
			name:   "config bytes changed",
			reason: "the config (the catalog itself) is checked against its digest too, not only the charts",
			blob:   func(res *build.Result) ocispec.Descriptor { return res.Config },
			tamper: func(data []byte) []byte { return bytes.Replace(data, []byte(`"demo"`), []byte(`"evil"`), 1) },
			what:   "config",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, res := buildLayout(t)
			desc := tc.blob(res)
			data, err := os.ReadFile(blobPath(dir, desc.Digest))
			if err != nil {
				t.Fatal(err)
			}
			tampered := tc.tamper(data)
			if err := os.WriteFile(blobPath(dir, desc.Digest), tampered, 0o644); err != nil {
				t.Fatal(err)
			}

			cache := memory.New()
			_, err = artifact.Pull(context.Background(), openLayout(t, dir), res.Tag, cache, artifact.PullOptions{})
			var mismatch *artifact.DigestMismatchError
			if !errors.As(err, &mismatch) {
				t.Fatalf("%s: Pull: %v, want a *DigestMismatchError (%s)", tc.name, err, tc.reason)
			}
			if mismatch.Blob != tc.what || mismatch.Expected != desc.Digest || mismatch.Actual != digest.FromBytes(tampered) {
				t.Errorf("%s: mismatch = %+v, want blob %q expected %s actual %s (%s)", tc.name, mismatch, tc.what, desc.Digest, digest.FromBytes(tampered), tc.reason)
			}
			if msg := err.Error(); !strings.Contains(msg, "digest mismatch") || !strings.Contains(msg, desc.Digest.String()) || !strings.Contains(msg, mismatch.Actual.String()) {
				t.Errorf("%s: message %q does not name both digests (%s)", tc.name, msg, tc.reason)
			}
			for _, d := range []ocispec.Descriptor{res.Manifest, desc} {
				if ok, _ := cache.Exists(context.Background(), d); ok {
					t.Errorf("%s: the cache holds %s after a failed pull (%s)", tc.name, d.Digest, tc.reason)
				}
			}
		})
	}
}

func TestPullDetectsTruncatedAndExtendedBlobs(t *testing.T) {
	for name, tamper := range map[string]func([]byte) []byte{
		"truncated": func(b []byte) []byte { return b[:len(b)-10] },
		"extended":  func(b []byte) []byte { return append(b, "more"...) },
	} {
		t.Run(name, func(t *testing.T) {
			dir, res := buildLayout(t)
			chart := res.Charts[1].Descriptor
			data, err := os.ReadFile(blobPath(dir, chart.Digest))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(blobPath(dir, chart.Digest), tamper(data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = artifact.Pull(context.Background(), openLayout(t, dir), res.Tag, nil, artifact.PullOptions{})
			var sizeErr *artifact.SizeMismatchError
			if !errors.As(err, &sizeErr) || sizeErr.Digest != chart.Digest || sizeErr.Blob != "chart charts/echo-operator" {
				t.Fatalf("Pull: %v, want a *SizeMismatchError for chart charts/echo-operator", err)
			}
		})
	}
}

// lying serves other bytes for some digests, as a broken or hostile
// registry or cache would.
type lying struct {
	oras.ReadOnlyTarget
	swap     map[digest.Digest][]byte
	resolved *ocispec.Descriptor
}

func (l *lying) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	if data, ok := l.swap[desc.Digest]; ok {
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	return l.ReadOnlyTarget.Fetch(ctx, desc)
}

func (l *lying) Resolve(ctx context.Context, ref string) (ocispec.Descriptor, error) {
	if l.resolved != nil {
		return *l.resolved, nil
	}
	return l.ReadOnlyTarget.Resolve(ctx, ref)
}

func TestPullDetectsLyingSource(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	res, err := build.Build(ctx, testCatalog, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Another revision of the same catalog: a manifest a stale or hostile
	// registry could serve instead.
	otherStore := memory.New()
	other, err := build.Build(ctx, testCatalog, otherStore, build.Options{Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	otherManifest, err := content.FetchAll(ctx, otherStore, other.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	chart := res.Charts[0].Descriptor
	chartData, err := content.FetchAll(ctx, store, chart)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(chartData)
	flipped[0] ^= 0xff
	wantedDigest := res.Manifest.Digest.String()

	for _, tc := range []struct {
		name      string
		reason    string
		src       *lying
		reference string
		blob      string
		expected  digest.Digest
		actual    digest.Digest
	}{
		{
			name:      "other manifest bytes for a digest",
			reason:    "the manifest's bytes are checked against the digest asked for, not trusted from the source",
			src:       &lying{ReadOnlyTarget: store, resolved: &res.Manifest, swap: map[digest.Digest][]byte{res.Manifest.Digest: otherManifest}},
			reference: wantedDigest,
			blob:      "manifest",
			expected:  res.Manifest.Digest,
			actual:    other.Manifest.Digest,
		},
		{
			name:      "a digest reference resolved to another manifest",
			reason:    "a digest reference pins the manifest: the source cannot resolve it to another one",
			src:       &lying{ReadOnlyTarget: store, resolved: &other.Manifest},
			reference: wantedDigest,
			blob:      "manifest",
			expected:  res.Manifest.Digest,
			actual:    other.Manifest.Digest,
		},
		{
			name:      "other chart bytes",
			reason:    "a chart served by a tag is still checked against the digest its manifest names",
			src:       &lying{ReadOnlyTarget: store, swap: map[digest.Digest][]byte{chart.Digest: flipped}},
			reference: res.Tag,
			blob:      "chart charts/echo",
			expected:  chart.Digest,
			actual:    digest.FromBytes(flipped),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := memory.New()
			_, err := artifact.Pull(ctx, tc.src, tc.reference, cache, artifact.PullOptions{})
			var mismatch *artifact.DigestMismatchError
			if !errors.As(err, &mismatch) {
				t.Fatalf("%s: Pull: %v, want a *DigestMismatchError (%s)", tc.name, err, tc.reason)
			}
			if mismatch.Blob != tc.blob || mismatch.Expected != tc.expected || mismatch.Actual != tc.actual {
				t.Errorf("%s: mismatch %+v, want %s expected %s actual %s (%s)", tc.name, mismatch, tc.blob, tc.expected, tc.actual, tc.reason)
			}
			if ok, _ := cache.Exists(ctx, res.Manifest); ok {
				t.Errorf("%s: the cache holds the requested manifest after a mismatch (%s)", tc.name, tc.reason)
			}
		})
	}
}

// craft pushes to store a copy of the built artifact's manifest changed by
// change, tagged "crafted".
func craft(t *testing.T, store *memory.Store, res *build.Result, change func(m *ocispec.Manifest)) {
	t.Helper()
	ctx := context.Background()
	data, err := content.FetchAll(ctx, store, res.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	change(&m)
	data, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, data)
	if err := store.Push(ctx, desc, bytes.NewReader(data)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		t.Fatal(err)
	}
	if err := store.Tag(ctx, desc, "crafted"); err != nil {
		t.Fatal(err)
	}
}

// pushBlob stores data in store and returns its descriptor.
func pushBlob(t *testing.T, store *memory.Store, mediaType string, data []byte) ocispec.Descriptor {
	t.Helper()
	desc := content.NewDescriptorFromBytes(mediaType, data)
	if err := store.Push(context.Background(), desc, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	return desc
}

func tgz(t *testing.T, name, body string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(body))
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestPullRejectsWhatIsNotACatalog(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reason string
		change func(t *testing.T, store *memory.Store, m *ocispec.Manifest)
		opts   artifact.PullOptions
		want   string
	}{
		{
			name:   "another artifactType",
			reason: "only a manifest of the catalog artifactType is a catalog; the refusal names both types",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
				m.ArtifactType = "application/vnd.example.thing.v1"
			},
			opts: artifact.PullOptions{},
			want: `artifactType "application/vnd.example.thing.v1", want "application/vnd.cozystack.catalog.v1"`,
		},
		{
			name:   "another config media type",
			reason: "the config must carry the catalog config media type, so an image config is not read as a catalog",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
				m.Config.MediaType = "application/vnd.oci.image.config.v1+json"
			},
			opts: artifact.PullOptions{},
			want: "config mediaType",
		},
		{
			name:   "a config that is not a catalog",
			reason: "the config is decoded strictly: an unknown field is refused, not ignored",
			change: func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
				m.Config = pushBlob(t, s, artifact.ConfigMediaType, []byte(`{"apiVersion":"cozystack.io/v1alpha1","kind":"Catalog","name":"demo","extra":1}`))
			},
			opts: artifact.PullOptions{},
			want: `unknown field "extra"`,
		},
		{
			name:   "a config that breaks a rule",
			reason: "a pulled catalog is validated like a built one: a catalog without variants is refused",
			change: func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
				m.Config = pushBlob(t, s, artifact.ConfigMediaType, []byte(`{"apiVersion":"cozystack.io/v1alpha1","kind":"Catalog","name":"demo","version":"1","minPlatformVersion":"0.1.0","variants":[]}`))
			},
			opts: artifact.PullOptions{},
			want: "variants: Required value",
		},
		{
			name:   "a layer of another media type",
			reason: "every layer is a chart or definitions layer; the refusal names the layer's index",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
				m.Layers[0].MediaType = "application/vnd.oci.image.layer.v1.tar+gzip"
			},
			opts: artifact.PullOptions{},
			want: `layers[0]`,
		},
		{
			name:   "an untitled layer",
			reason: "a chart layer is found by its title annotation, so a layer without one is refused",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
				delete(m.Layers[0].Annotations, artifact.AnnotationTitle)
			},
			opts: artifact.PullOptions{},
			want: "org.opencontainers.image.title",
		},
		{
			name:   "a layer titled outside the catalog",
			reason: "a title is a path inside the catalog: one climbing out with .. is refused",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
				m.Layers[0].Annotations = map[string]string{artifact.AnnotationTitle: "../etc", artifact.AnnotationChartName: "x", artifact.AnnotationChartVersion: "1.0.0"}
			},
			opts: artifact.PullOptions{},
			want: `"../etc"`,
		},
		{
			name:   "two layers with one title",
			reason: "a title names one chart: a second layer with it would make the chart ambiguous",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
				m.Layers[1].Annotations = m.Layers[0].Annotations
			},
			opts: artifact.PullOptions{},
			want: `a second layer titled "charts/echo"`,
		},
		{
			name:   "a layer without the chart version",
			reason: "a chart layer carries its chart version annotation",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
				delete(m.Layers[1].Annotations, artifact.AnnotationChartVersion)
			},
			opts: artifact.PullOptions{},
			want: artifact.AnnotationChartVersion,
		},
		{
			name:   "a component chart without a layer",
			reason: "every chart a component uses is shipped as a layer",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
				m.Layers = m.Layers[:1]
			},
			opts: artifact.PullOptions{},
			want: `a component uses chart "charts/echo-operator", but no layer is titled so`,
		},
		{
			name:   "an application chart without a layer",
			reason: "every chart an application uses is shipped as a layer too, and the refusal names the application",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
				m.Layers = m.Layers[:2]
			},
			opts: artifact.PullOptions{},
			want: `application "echo-tenant" uses chart "charts/echo-tenant", but no layer is titled so`,
		},
		{
			name:   "a component name naming two charts",
			reason: "a component name means one chart in every variant; the refusal names both places",
			change: func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
				data, err := content.FetchAll(context.Background(), s, m.Config)
				if err != nil {
					t.Fatal(err)
				}
				data = bytes.Replace(data, []byte(`"name":"echo","chart":"charts/echo"`), []byte(`"name":"echo","chart":"charts/echo-tenant"`), 1)
				m.Config = pushBlob(t, s, artifact.ConfigMediaType, data)
			},
			opts: artifact.PullOptions{},
			want: `variants[1].components[0].chart: Invalid value: "charts/echo": component "echo" uses chart "charts/echo-tenant" in variants[0].components[1]`,
		},
		{
			name:   "a layer no component uses",
			reason: "an artifact carries only the charts its catalog uses; the refusal names the extra layer and its digest",
			change: func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
				extra := pushBlob(t, s, artifact.ChartMediaType, tgz(t, "extra/Chart.yaml", "name: extra"))
				extra.Annotations = map[string]string{artifact.AnnotationTitle: "charts/extra", artifact.AnnotationChartName: "extra", artifact.AnnotationChartVersion: "1.0.0"}
				m.Layers = append(m.Layers, extra)
			},
			opts: artifact.PullOptions{},
			want: `layer "charts/extra" (sha256:`,
		},
		{
			name:   "too many layers",
			reason: "MaxCharts bounds the chart layers before any is fetched",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {},
			opts:   artifact.PullOptions{MaxCharts: 1},
			want:   "3 chart layers, the limit is 1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.New()
			res, err := build.Build(context.Background(), testCatalog, store, build.Options{})
			if err != nil {
				t.Fatal(err)
			}
			craft(t, store, res, func(m *ocispec.Manifest) { tc.change(t, store, m) })
			_, err = artifact.Pull(context.Background(), store, "crafted", nil, tc.opts)
			if !errors.Is(err, artifact.ErrInvalidArtifact) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: Pull: %v\nwant ErrInvalidArtifact containing %q (%s)", tc.name, err, tc.want, tc.reason)
			}
		})
	}
}

func TestPullEnforcesSizeLimits(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	res, err := build.Build(ctx, testCatalog, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		reason string
		opts   artifact.PullOptions
		blob   string
	}{
		{
			name:   "manifest",
			reason: "MaxManifestSize bounds the manifest read, so a huge manifest is not held in memory",
			opts:   artifact.PullOptions{MaxManifestSize: 100},
			blob:   "manifest",
		},
		{
			name:   "config",
			reason: "MaxConfigSize bounds the config read apart from the manifest",
			opts:   artifact.PullOptions{MaxConfigSize: 100},
			blob:   "config",
		},
		{
			name:   "chart",
			reason: "MaxChartSize bounds each chart layer, and the error names the chart",
			opts:   artifact.PullOptions{MaxChartSize: 100},
			blob:   "chart charts/",
		},
	} {
		_, err := artifact.Pull(ctx, store, res.Tag, nil, tc.opts)
		var tooLarge *artifact.TooLargeError
		if !errors.As(err, &tooLarge) || !strings.HasPrefix(tooLarge.Blob, tc.blob) || tooLarge.Limit != 100 {
			t.Errorf("%s: Pull with %+v: %v, want a *TooLargeError for %s (%s)", tc.name, tc.opts, err, tc.blob, tc.reason)
		}
	}
	// An index instead of a manifest.
	index := pushBlob(t, store, ocispec.MediaTypeImageIndex, []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`))
	if err := store.Tag(ctx, index, "index"); err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Pull(ctx, store, "index", nil, artifact.PullOptions{}); !errors.Is(err, artifact.ErrInvalidArtifact) {
		t.Errorf("Pull of an index: %v, want ErrInvalidArtifact", err)
	}
}

// A chart layer whose archive would write outside the unpack directory is
// refused at pull time, and nothing is stored.
func TestPullRejectsUnsafeChartArchive(t *testing.T) {
	store := memory.New()
	res, err := build.Build(context.Background(), testCatalog, store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	evil := pushBlob(t, store, artifact.ChartMediaType, tgz(t, "echo/../../etc/cron.d/evil", "* * * * * root sh"))
	craft(t, store, res, func(m *ocispec.Manifest) {
		evil.Annotations = m.Layers[0].Annotations
		m.Layers[0] = evil
	})
	cache := memory.New()
	_, err = artifact.Pull(context.Background(), store, "crafted", cache, artifact.PullOptions{})
	var entryErr *safetar.EntryError
	if !errors.Is(err, safetar.ErrPathTraversal) || !errors.As(err, &entryErr) || !strings.Contains(err.Error(), "chart charts/echo") {
		t.Fatalf("Pull: %v, want a path traversal in chart charts/echo", err)
	}
	if entryErr.Entry != "echo/../../etc/cron.d/evil" {
		t.Errorf("entry = %q", entryErr.Entry)
	}
	if ok, _ := cache.Exists(context.Background(), evil); ok {
		t.Errorf("the unsafe chart was stored")
	}
}

// buildWithDefinitions builds the test catalog with its definitions into
// a memory store.
func buildWithDefinitions(t *testing.T) (*memory.Store, *build.Result) {
	t.Helper()
	store := memory.New()
	res, err := build.Build(context.Background(), withDefinitions(t), store, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Definitions) != 2 {
		t.Fatalf("built %d definitions layers, want 2", len(res.Definitions))
	}
	return store, res
}

// Build and pull: the definitions come back decoded, in manifest order,
// and are stored; an artifact without definitions still pulls, with none.
func TestPullDefinitions(t *testing.T) {
	ctx := context.Background()
	store, res := buildWithDefinitions(t)
	cache := memory.New()
	a, err := artifact.Pull(ctx, store, res.Tag, cache, artifact.PullOptions{})
	if err != nil {
		t.Fatalf("Pull: %v", err)
	}
	if len(a.Definitions) != 2 {
		t.Fatalf("pulled %d definitions, want 2", len(a.Definitions))
	}
	for i, d := range a.Definitions {
		want := res.Definitions[i]
		if d.Path != want.Path || !content.Equal(d.Descriptor, want.Descriptor) || len(d.Objects) != len(want.Objects) {
			t.Errorf("definitions[%d] = %s %v (%d objects), want %s %v (%d objects)", i, d.Path, d.Descriptor, len(d.Objects), want.Path, want.Descriptor, len(want.Objects))
		}
		data, err := content.FetchAll(ctx, cache, d.Descriptor)
		if err != nil {
			t.Errorf("the cache lacks %s: %v", d.Path, err)
		}
		objs, err := artifact.DecodeDefinitionFile(d.Path, data)
		if err != nil || len(objs) != len(d.Objects) {
			t.Errorf("%s from the cache: %d objects, %v", d.Path, len(objs), err)
		}
	}
	if n := len(a.DefinitionObjects()); n != 3 {
		t.Errorf("%d objects, want an AD, a policy and a binding", n)
	}
	if ad := a.Definitions[1].Objects[0]; ad.GetKind() != "ApplicationDefinition" || ad.GetName() != "echo" {
		t.Errorf("applicationdefinitions/echo.yaml holds %s %s", ad.GetKind(), ad.GetName())
	}

	plain := memory.New()
	old, err := build.Build(ctx, testCatalog, plain, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := artifact.Pull(ctx, plain, old.Tag, nil, artifact.PullOptions{})
	if err != nil || len(b.Definitions) != 0 || len(b.DefinitionObjects()) != 0 {
		t.Fatalf("an artifact without definitions: %v, %d definitions", err, len(b.Definitions))
	}
}

// A definitions layer whose bytes are not its digest's, or over the
// limit, is refused and nothing is stored.
func TestPullVerifiesDefinitionsLayers(t *testing.T) {
	ctx := context.Background()
	store, res := buildWithDefinitions(t)
	def := res.Definitions[1]
	data, err := content.FetchAll(ctx, store, def.Descriptor)
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(data, []byte("kind: Echo"), []byte("kind: Ecco"), 1)
	cache := memory.New()
	_, err = artifact.Pull(ctx, &lying{ReadOnlyTarget: store, swap: map[digest.Digest][]byte{def.Descriptor.Digest: tampered}}, res.Tag, cache, artifact.PullOptions{})
	var mismatch *artifact.DigestMismatchError
	if !errors.As(err, &mismatch) || mismatch.Blob != "definitions applicationdefinitions/echo.yaml" || mismatch.Expected != def.Descriptor.Digest || mismatch.Actual != digest.FromBytes(tampered) {
		t.Fatalf("Pull: %v, want a *DigestMismatchError for definitions applicationdefinitions/echo.yaml", err)
	}
	for _, d := range []ocispec.Descriptor{res.Manifest, def.Descriptor} {
		if ok, _ := cache.Exists(ctx, d); ok {
			t.Errorf("the cache holds %s after a failed pull", d.Digest)
		}
	}

	_, err = artifact.Pull(ctx, store, res.Tag, cache, artifact.PullOptions{MaxDefinitionSize: 100})
	var tooLarge *artifact.TooLargeError
	if !errors.As(err, &tooLarge) || !strings.HasPrefix(tooLarge.Blob, "definitions applicationdefinitions/") || tooLarge.Limit != 100 {
		t.Fatalf("Pull with MaxDefinitionSize 100: %v, want a *TooLargeError for a definitions layer", err)
	}
	if ok, _ := cache.Exists(ctx, res.Manifest); ok {
		t.Error("the cache holds the manifest after a failed pull")
	}
}

func TestPullRejectsBadDefinitions(t *testing.T) {
	// The layers of the built artifact: 3 charts, then
	// applicationdefinitions/echo-policy.yml and applicationdefinitions/echo.yaml.
	const policy, ad = 3, 4
	retitle := func(i int, title string) func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
		return func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
			m.Layers[i].Annotations = map[string]string{artifact.AnnotationTitle: title}
		}
	}
	replace := func(i int, body string) func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
		return func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
			d := pushBlob(t, s, artifact.DefinitionMediaType, []byte(body))
			d.Annotations = m.Layers[i].Annotations
			m.Layers[i] = d
		}
	}
	for _, tc := range []struct {
		name   string
		reason string
		change func(t *testing.T, s *memory.Store, m *ocispec.Manifest)
		opts   artifact.PullOptions
		want   string
	}{
		{
			name:   "an untitled definitions layer",
			reason: "a definitions layer is found by its title, so one without a title is refused by its index and digest",
			change: func(t *testing.T, s *memory.Store, m *ocispec.Manifest) { m.Layers[ad].Annotations = nil },
			opts:   artifact.PullOptions{},
			want:   `layers[4] (sha256:`,
		},
		{
			name:   "a definitions layer titled outside the catalog",
			reason: "a definitions title is a path inside the catalog: one climbing out with .. is refused",
			change: retitle(ad, "../echo.yaml"),
			opts:   artifact.PullOptions{},
			want:   `definitions layer: annotation org.opencontainers.image.title "../echo.yaml"`,
		},
		{
			name:   "a definitions layer titled outside applicationdefinitions/",
			reason: "definitions live only in applicationdefinitions/, not among the charts",
			change: retitle(ad, "charts/echo.yaml"),
			opts:   artifact.PullOptions{},
			want:   `"charts/echo.yaml": must be a file directly in applicationdefinitions/`,
		},
		{
			name:   "a definitions layer in a subdirectory",
			reason: "definitions are files directly in applicationdefinitions/, not in a subdirectory",
			change: retitle(ad, "applicationdefinitions/x/echo.yaml"),
			opts:   artifact.PullOptions{},
			want:   "must be a file directly in applicationdefinitions/",
		},
		{
			name:   "a definitions layer that is not YAML by name",
			reason: "a definitions file is named .yaml or .yml",
			change: retitle(ad, "applicationdefinitions/echo.json"),
			opts:   artifact.PullOptions{},
			want:   "must end in .yaml or .yml",
		},
		{
			name:   "two definitions layers with one title",
			reason: "a definitions title names one file: a second layer with it is refused",
			change: retitle(ad, "applicationdefinitions/echo-policy.yml"),
			opts:   artifact.PullOptions{},
			want:   `layers[4] (sha256:`,
		},
		{
			name:   "a definitions layer titled as a chart",
			reason: "chart and definitions layers share one title space",
			change: retitle(ad, "charts/echo"),
			opts:   artifact.PullOptions{},
			want:   `a second layer titled "charts/echo"`,
		},
		{
			name:   "a definitions layer that does not decode",
			reason: "a definitions layer is decoded at pull time; the refusal names the file, document and line",
			change: replace(ad, "kind: [\n"),
			opts:   artifact.PullOptions{},
			want:   "applicationdefinitions/echo.yaml, document 1 (line 1): not valid YAML",
		},
		{
			name:   "a definition of another kind",
			reason: "a definitions layer holds only the kinds the platform installs, never e.g. a ClusterRole",
			change: replace(ad, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: everything\n"),
			opts:   artifact.PullOptions{},
			want:   `applicationdefinitions/echo.yaml, document 1: apiVersion "rbac.authorization.k8s.io/v1", kind "ClusterRole": the platform installs only`,
		},
		{
			name:   "a policy matching what the catalog does not serve",
			reason: "a policy may match only resources the catalog serves, so it cannot govern Secrets",
			change: replace(policy, strings.Replace(readFile(t, filepath.Join(testDefinitions, "echo-policy.yml")), `resources: ["echoes", "echoes/status"]`, `resources: ["echoes", "secrets"]`, 1)),
			opts:   artifact.PullOptions{},
			want:   `spec.matchConstraints.resourceRules[0].resources[1]: Invalid value: "secrets"`,
		},
		{
			name:   "a provided kind without its AD",
			reason: "every kind the catalog provides has an ApplicationDefinition in the artifact",
			change: func(t *testing.T, s *memory.Store, m *ocispec.Manifest) { m.Layers = m.Layers[:ad] },
			opts:   artifact.PullOptions{},
			want:   "catalog.yaml: provides.applicationKinds[0]: kind Echo has no ApplicationDefinition",
		},
		{
			name:   "too many definitions layers",
			reason: "MaxDefinitions bounds the definitions layers before any is fetched",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {},
			opts:   artifact.PullOptions{MaxDefinitions: 1},
			want:   "2 definitions layers, the limit is 1",
		},
		{
			name:   "a layer of another media type",
			reason: "a layer that is neither a chart nor a definitions layer is refused by its index",
			change: func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) { m.Layers[ad].MediaType = "application/yaml" },
			opts:   artifact.PullOptions{},
			want:   `layers[4] (sha256:`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, res := buildWithDefinitions(t)
			craft(t, store, res, func(m *ocispec.Manifest) { tc.change(t, store, m) })
			cache := memory.New()
			_, err := artifact.Pull(context.Background(), store, "crafted", cache, tc.opts)
			if !errors.Is(err, artifact.ErrInvalidArtifact) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s: Pull: %v\nwant ErrInvalidArtifact containing %q (%s)", tc.name, err, tc.want, tc.reason)
			}
			t.Log(err)
			if ok, _ := cache.Exists(context.Background(), res.Config); ok {
				t.Errorf("%s: a refused artifact's config was stored (%s)", tc.name, tc.reason)
			}
		})
	}
}
