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
		blob   func(res *build.Result) ocispec.Descriptor
		tamper func(data []byte) []byte
		what   string
	}{
		{"chart bytes changed", func(res *build.Result) ocispec.Descriptor { return res.Charts[0].Descriptor },
			func(data []byte) []byte { data[len(data)/2] ^= 0xff; return data }, "chart charts/echo"},
		{"config bytes changed", func(res *build.Result) ocispec.Descriptor { return res.Config },
			func(data []byte) []byte { return bytes.Replace(data, []byte(`"demo"`), []byte(`"evil"`), 1) }, "config"},
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
				t.Fatalf("Pull: %v, want a *DigestMismatchError", err)
			}
			if mismatch.Blob != tc.what || mismatch.Expected != desc.Digest || mismatch.Actual != digest.FromBytes(tampered) {
				t.Errorf("mismatch = %+v, want blob %q expected %s actual %s", mismatch, tc.what, desc.Digest, digest.FromBytes(tampered))
			}
			if msg := err.Error(); !strings.Contains(msg, "digest mismatch") || !strings.Contains(msg, desc.Digest.String()) || !strings.Contains(msg, mismatch.Actual.String()) {
				t.Errorf("message %q does not name both digests", msg)
			}
			for _, d := range []ocispec.Descriptor{res.Manifest, desc} {
				if ok, _ := cache.Exists(context.Background(), d); ok {
					t.Errorf("the cache holds %s after a failed pull", d.Digest)
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
		src       *lying
		reference string
		blob      string
		expected  digest.Digest
		actual    digest.Digest
	}{
		{"other manifest bytes for a digest", &lying{ReadOnlyTarget: store, resolved: &res.Manifest, swap: map[digest.Digest][]byte{res.Manifest.Digest: otherManifest}},
			wantedDigest, "manifest", res.Manifest.Digest, other.Manifest.Digest},
		{"a digest reference resolved to another manifest", &lying{ReadOnlyTarget: store, resolved: &other.Manifest},
			wantedDigest, "manifest", res.Manifest.Digest, other.Manifest.Digest},
		{"other chart bytes", &lying{ReadOnlyTarget: store, swap: map[digest.Digest][]byte{chart.Digest: flipped}},
			res.Tag, "chart charts/echo", chart.Digest, digest.FromBytes(flipped)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := memory.New()
			_, err := artifact.Pull(ctx, tc.src, tc.reference, cache, artifact.PullOptions{})
			var mismatch *artifact.DigestMismatchError
			if !errors.As(err, &mismatch) {
				t.Fatalf("Pull: %v, want a *DigestMismatchError", err)
			}
			if mismatch.Blob != tc.blob || mismatch.Expected != tc.expected || mismatch.Actual != tc.actual {
				t.Errorf("mismatch %+v, want %s expected %s actual %s", mismatch, tc.blob, tc.expected, tc.actual)
			}
			if ok, _ := cache.Exists(ctx, res.Manifest); ok {
				t.Errorf("the cache holds the requested manifest after a mismatch")
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
		change func(t *testing.T, store *memory.Store, m *ocispec.Manifest)
		opts   artifact.PullOptions
		want   string
	}{
		{"another artifactType", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
			m.ArtifactType = "application/vnd.example.thing.v1"
		}, artifact.PullOptions{}, `artifactType "application/vnd.example.thing.v1", want "application/vnd.cozystack.catalog.v1"`},
		{"another config media type", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
			m.Config.MediaType = "application/vnd.oci.image.config.v1+json"
		}, artifact.PullOptions{}, "config mediaType"},
		{"a config that is not a catalog", func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
			m.Config = pushBlob(t, s, artifact.ConfigMediaType, []byte(`{"apiVersion":"cozystack.io/v1alpha1","kind":"Catalog","name":"demo","extra":1}`))
		}, artifact.PullOptions{}, `unknown field "extra"`},
		{"a config that breaks a rule", func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
			m.Config = pushBlob(t, s, artifact.ConfigMediaType, []byte(`{"apiVersion":"cozystack.io/v1alpha1","kind":"Catalog","name":"demo","version":"1","minPlatformVersion":"0.1.0","variants":[]}`))
		}, artifact.PullOptions{}, "variants: Required value"},
		{"a layer of another media type", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
			m.Layers[0].MediaType = "application/vnd.oci.image.layer.v1.tar+gzip"
		}, artifact.PullOptions{}, `layers[0]`},
		{"an untitled layer", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
			delete(m.Layers[0].Annotations, artifact.AnnotationTitle)
		}, artifact.PullOptions{}, "org.opencontainers.image.title"},
		{"a layer titled outside the catalog", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
			m.Layers[0].Annotations = map[string]string{artifact.AnnotationTitle: "../etc", artifact.AnnotationChartName: "x", artifact.AnnotationChartVersion: "1.0.0"}
		}, artifact.PullOptions{}, `"../etc"`},
		{"two layers with one title", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
			m.Layers[1].Annotations = m.Layers[0].Annotations
		}, artifact.PullOptions{}, `a second layer titled "charts/echo"`},
		{"a layer without the chart version", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
			delete(m.Layers[1].Annotations, artifact.AnnotationChartVersion)
		}, artifact.PullOptions{}, artifact.AnnotationChartVersion},
		{"a component chart without a layer", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
			m.Layers = m.Layers[:1]
		}, artifact.PullOptions{}, `a component uses chart "charts/echo-operator", but no layer is titled so`},
		{"an application chart without a layer", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {
			m.Layers = m.Layers[:2]
		}, artifact.PullOptions{}, `application "echo-tenant" uses chart "charts/echo-tenant", but no layer is titled so`},
		{"a component name naming two charts", func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
			data, err := content.FetchAll(context.Background(), s, m.Config)
			if err != nil {
				t.Fatal(err)
			}
			data = bytes.Replace(data, []byte(`"name":"echo","chart":"charts/echo"`), []byte(`"name":"echo","chart":"charts/echo-tenant"`), 1)
			m.Config = pushBlob(t, s, artifact.ConfigMediaType, data)
		}, artifact.PullOptions{}, `variants[1].components[0].chart: Invalid value: "charts/echo": component "echo" uses chart "charts/echo-tenant" in variants[0].components[1]`},
		{"a layer no component uses", func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
			extra := pushBlob(t, s, artifact.ChartMediaType, tgz(t, "extra/Chart.yaml", "name: extra"))
			extra.Annotations = map[string]string{artifact.AnnotationTitle: "charts/extra", artifact.AnnotationChartName: "extra", artifact.AnnotationChartVersion: "1.0.0"}
			m.Layers = append(m.Layers, extra)
		}, artifact.PullOptions{}, `layer "charts/extra" (sha256:`},
		{"too many layers", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {}, artifact.PullOptions{MaxCharts: 1}, "3 chart layers, the limit is 1"},
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
				t.Fatalf("Pull: %v\nwant ErrInvalidArtifact containing %q", err, tc.want)
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
		opts artifact.PullOptions
		blob string
	}{
		{artifact.PullOptions{MaxManifestSize: 100}, "manifest"},
		{artifact.PullOptions{MaxConfigSize: 100}, "config"},
		{artifact.PullOptions{MaxChartSize: 100}, "chart charts/"},
	} {
		_, err := artifact.Pull(ctx, store, res.Tag, nil, tc.opts)
		var tooLarge *artifact.TooLargeError
		if !errors.As(err, &tooLarge) || !strings.HasPrefix(tooLarge.Blob, tc.blob) || tooLarge.Limit != 100 {
			t.Errorf("Pull with %+v: %v, want a *TooLargeError for %s", tc.opts, err, tc.blob)
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
		change func(t *testing.T, s *memory.Store, m *ocispec.Manifest)
		opts   artifact.PullOptions
		want   string
	}{
		{"an untitled definitions layer", func(t *testing.T, s *memory.Store, m *ocispec.Manifest) { m.Layers[ad].Annotations = nil },
			artifact.PullOptions{}, `layers[4] (sha256:`},
		{"a definitions layer titled outside the catalog", retitle(ad, "../echo.yaml"), artifact.PullOptions{}, `definitions layer: annotation org.opencontainers.image.title "../echo.yaml"`},
		{"a definitions layer titled outside applicationdefinitions/", retitle(ad, "charts/echo.yaml"), artifact.PullOptions{}, `"charts/echo.yaml": must be a file directly in applicationdefinitions/`},
		{"a definitions layer in a subdirectory", retitle(ad, "applicationdefinitions/x/echo.yaml"), artifact.PullOptions{}, "must be a file directly in applicationdefinitions/"},
		{"a definitions layer that is not YAML by name", retitle(ad, "applicationdefinitions/echo.json"), artifact.PullOptions{}, "must end in .yaml or .yml"},
		{"two definitions layers with one title", retitle(ad, "applicationdefinitions/echo-policy.yml"), artifact.PullOptions{}, `layers[4] (sha256:`},
		{"a definitions layer titled as a chart", retitle(ad, "charts/echo"), artifact.PullOptions{}, `a second layer titled "charts/echo"`},
		{"a definitions layer that does not decode", replace(ad, "kind: [\n"), artifact.PullOptions{}, "applicationdefinitions/echo.yaml, document 1 (line 1): not valid YAML"},
		{"a definition of another kind", replace(ad, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: everything\n"),
			artifact.PullOptions{}, `applicationdefinitions/echo.yaml, document 1: apiVersion "rbac.authorization.k8s.io/v1", kind "ClusterRole": the platform installs only`},
		{"a policy matching what the catalog does not serve", replace(policy, strings.Replace(readFile(t, filepath.Join(testDefinitions, "echo-policy.yml")), `resources: ["echoes", "echoes/status"]`, `resources: ["echoes", "secrets"]`, 1)),
			artifact.PullOptions{}, `spec.matchConstraints.resourceRules[0].resources[1]: Invalid value: "secrets"`},
		{"a provided kind without its AD", func(t *testing.T, s *memory.Store, m *ocispec.Manifest) { m.Layers = m.Layers[:ad] },
			artifact.PullOptions{}, "catalog.yaml: provides.applicationKinds[0]: kind Echo has no ApplicationDefinition"},
		{"too many definitions layers", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) {}, artifact.PullOptions{MaxDefinitions: 1}, "2 definitions layers, the limit is 1"},
		{"a layer of another media type", func(t *testing.T, _ *memory.Store, m *ocispec.Manifest) { m.Layers[ad].MediaType = "application/yaml" },
			artifact.PullOptions{}, `layers[4] (sha256:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, res := buildWithDefinitions(t)
			craft(t, store, res, func(m *ocispec.Manifest) { tc.change(t, store, m) })
			cache := memory.New()
			_, err := artifact.Pull(context.Background(), store, "crafted", cache, tc.opts)
			if !errors.Is(err, artifact.ErrInvalidArtifact) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Pull: %v\nwant ErrInvalidArtifact containing %q", err, tc.want)
			}
			t.Log(err)
			if ok, _ := cache.Exists(context.Background(), res.Config); ok {
				t.Error("a refused artifact's config was stored")
			}
		})
	}
}
