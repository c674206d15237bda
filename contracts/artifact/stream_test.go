package artifact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/content/oci"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/artifacttest"
	"cozystack.io/contracts/artifact/build"
	"cozystack.io/contracts/artifact/safetar"
)

// observed wraps a source: it counts the fetches of each blob, and, at
// each chart fetch, how many files the staging directory holds (Pull
// creates a chart's staging file before fetching it). With cancelAfter,
// the first chart read cancels the pull after that many bytes and its
// later reads fail as a cancelled HTTP body would.
type observed struct {
	oras.ReadOnlyTarget
	staging     string
	cancelAfter int64
	cancel      context.CancelFunc

	mu        sync.Mutex
	fetches   map[digest.Digest]int
	maxStaged int
}

func (o *observed) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	o.mu.Lock()
	if o.fetches == nil {
		o.fetches = map[digest.Digest]int{}
	}
	o.fetches[desc.Digest]++
	var cancel context.CancelFunc
	if desc.MediaType == artifact.ChartMediaType {
		if o.staging != "" {
			if entries, err := os.ReadDir(o.staging); err == nil {
				o.maxStaged = max(o.maxStaged, len(entries))
			}
		}
		cancel, o.cancel = o.cancel, nil
	}
	o.mu.Unlock()
	rc, err := o.ReadOnlyTarget.Fetch(ctx, desc)
	if err != nil || desc.MediaType != artifact.ChartMediaType || cancel == nil {
		return rc, err
	}
	return &cancelling{ReadCloser: rc, ctx: ctx, left: o.cancelAfter, cancel: cancel}, nil
}

// layerFetches is how many times blobs other than the manifest were
// fetched.
func (o *observed) layerFetches(manifest digest.Digest) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for d, c := range o.fetches {
		if d != manifest {
			n += c
		}
	}
	return n
}

// cancelling reads left bytes, then cancels and fails with ctx's error.
type cancelling struct {
	io.ReadCloser
	ctx    context.Context
	left   int64
	cancel context.CancelFunc
}

func (c *cancelling) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.cancel()
		return 0, c.ctx.Err()
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}

// blobFiles returns the files under an OCI layout directory's blobs/ and
// ingest/ directories.
func blobFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	for _, sub := range []string{"blobs", "ingest"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A chart layer is read once, straight into a staging file; whatever goes
// wrong (a chart's digest, its size, its archive, the definitions checked
// after every chart was staged, a cancellation), dst holds no blob of the
// artifact and the staging directory is empty when Pull returns. Without a
// dst no file is written at all.
func TestPullStagesChartsAndCleansUp(t *testing.T) {
	ctx := context.Background()
	src, res := buildWithDefinitions(t)
	chart := res.Charts[0].Descriptor // charts/echo
	chartData, err := content.FetchAll(ctx, src, chart)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(chartData)
	flipped[len(flipped)/2] ^= 0xff
	// An archive whose first entry is unsafe, with data after it: a byte
	// changed there in transit is a digest mismatch, reported as such,
	// though the archive is refused long before it (Pull reads the whole
	// blob).
	unsafeTgz := tgz(t, "echo/../../etc/cron.d/evil", strings.Repeat("x", 64<<10))
	unsafe := content.NewDescriptorFromBytes(artifact.ChartMediaType, unsafeTgz)
	unsafeFlipped := bytes.Clone(unsafeTgz)
	unsafeFlipped[len(unsafeFlipped)-12] ^= 0xff
	// useUnsafe makes the unsafe archive the layer of charts/echo.
	useUnsafe := func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
		d := pushBlob(t, s, artifact.ChartMediaType, unsafeTgz)
		d.Annotations = m.Layers[0].Annotations
		m.Layers[0] = d
	}

	for _, tc := range []struct {
		name   string
		reason string
		// change crafts the manifest pulled ("crafted"); nil pulls res.Tag.
		change func(t *testing.T, s *memory.Store, m *ocispec.Manifest)
		swap   map[digest.Digest][]byte
		// cancelAfter > 0 cancels the pull after so many bytes of a chart.
		cancelAfter int64
		noDst       bool
		check       func(t *testing.T, err error)
	}{
		{
			name:   "verified",
			reason: "a good artifact pulls: every blob is stored and each chart is fetched once",
			check: func(t *testing.T, err error) {
				if err != nil {
					t.Fatalf("Pull: %v", err)
				}
			},
		},
		{
			name:   "verified without a dst",
			reason: "without a dst Pull verifies the charts without staging or writing any file",
			noDst:  true,
			check: func(t *testing.T, err error) {
				if err != nil {
					t.Fatalf("Pull: %v", err)
				}
			},
		},
		{
			name:   "chart bytes changed",
			reason: "a chart whose bytes changed in transit is refused by digest, and its staging file is removed",
			swap:   map[digest.Digest][]byte{chart.Digest: flipped},
			check: func(t *testing.T, err error) {
				var mismatch *artifact.DigestMismatchError
				if !errors.As(err, &mismatch) || mismatch.Blob != "chart charts/echo" || mismatch.Actual != digest.FromBytes(flipped) {
					t.Fatalf("Pull: %v, want a *DigestMismatchError for chart charts/echo, actual %s", err, digest.FromBytes(flipped))
				}
			},
		},
		{
			name:   "chart truncated",
			reason: "a chart cut short is refused by size, with the bytes received",
			swap:   map[digest.Digest][]byte{chart.Digest: chartData[:len(chartData)-10]},
			check: func(t *testing.T, err error) {
				var sizeErr *artifact.SizeMismatchError
				if !errors.As(err, &sizeErr) || sizeErr.Blob != "chart charts/echo" || sizeErr.Actual != int64(len(chartData)-10) {
					t.Fatalf("Pull: %v, want a *SizeMismatchError for chart charts/echo, %d bytes received", err, len(chartData)-10)
				}
			},
		},
		{
			name:   "chart extended",
			reason: "a chart longer than declared is refused by size as it overruns (actual -1: more received)",
			swap:   map[digest.Digest][]byte{chart.Digest: append(bytes.Clone(chartData), "more"...)},
			check: func(t *testing.T, err error) {
				var sizeErr *artifact.SizeMismatchError
				if !errors.As(err, &sizeErr) || sizeErr.Blob != "chart charts/echo" || sizeErr.Actual != -1 {
					t.Fatalf("Pull: %v, want a *SizeMismatchError for chart charts/echo, more bytes received", err)
				}
			},
		},
		{
			name:   "unsafe chart entry",
			reason: "an unsafe archive entry in a staged chart is refused and nothing is stored",
			change: useUnsafe,
			check: func(t *testing.T, err error) {
				if !errors.Is(err, safetar.ErrPathTraversal) || !strings.Contains(err.Error(), "chart charts/echo") {
					t.Fatalf("Pull: %v, want a path traversal in chart charts/echo", err)
				}
			},
		},
		{
			name:   "unsafe chart entry, changed after it",
			reason: "the whole blob is read: a byte changed after the unsafe entry is reported as a digest mismatch",
			change: useUnsafe,
			swap:   map[digest.Digest][]byte{unsafe.Digest: unsafeFlipped},
			check: func(t *testing.T, err error) {
				var mismatch *artifact.DigestMismatchError
				if !errors.As(err, &mismatch) || mismatch.Actual != digest.FromBytes(unsafeFlipped) {
					t.Fatalf("Pull: %v, want a *DigestMismatchError with actual %s", err, digest.FromBytes(unsafeFlipped))
				}
			},
		},
		{
			name:   "definitions refused after the charts were staged",
			reason: "definitions refused after every chart was staged still leave dst and the staging directory empty",
			change: func(t *testing.T, s *memory.Store, m *ocispec.Manifest) {
				m.Layers = m.Layers[:len(m.Layers)-1] // the AD of the provided kind
			},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, artifact.ErrInvalidArtifact) || !strings.Contains(err.Error(), "has no ApplicationDefinition") {
					t.Fatalf("Pull: %v, want ErrInvalidArtifact for the missing AD", err)
				}
			},
		},
		{
			name:        "cancelled while a chart is read",
			reason:      "a cancellation while a chart is read ends the pull and removes the staging file",
			cancelAfter: 100,
			check: func(t *testing.T, err error) {
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Pull: %v, want context.Canceled", err)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tc.name, tc.reason)
				}
			})
			store, res := buildWithDefinitions(t)
			reference := res.Tag
			if tc.change != nil {
				craft(t, store, res, func(m *ocispec.Manifest) { tc.change(t, store, m) })
				reference = "crafted"
			}
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			staging := t.TempDir()
			src := &observed{ReadOnlyTarget: &lying{ReadOnlyTarget: store, swap: tc.swap}, staging: staging}
			if tc.cancelAfter > 0 {
				src.cancelAfter, src.cancel = tc.cancelAfter, cancel
			}
			dstDir := t.TempDir()
			var dst content.Pusher
			if !tc.noDst {
				s, err := oci.New(dstDir)
				if err != nil {
					t.Fatal(err)
				}
				dst = s
			}

			a, err := artifact.Pull(ctx, src, reference, dst, artifact.PullOptions{StagingDir: staging})
			tc.check(t, err)

			if left := dirEntries(t, staging); len(left) > 0 {
				t.Errorf("staging files left behind: %v", left)
			}
			switch {
			case tc.noDst:
				if src.maxStaged != 0 {
					t.Errorf("Pull without a dst staged %d files", src.maxStaged)
				}
				if files := blobFiles(t, dstDir); len(files) > 0 {
					t.Errorf("Pull without a dst wrote %v", files)
				}
			case src.maxStaged == 0:
				t.Errorf("no chart was staged: the case tests nothing")
			}
			if err != nil {
				if files := blobFiles(t, dstDir); len(files) > 0 {
					t.Errorf("a failed pull stored %d blobs: %v", len(files), files)
				}
				return
			}
			if dst == nil {
				return
			}
			// Every blob is stored, and each chart was read once.
			stored := dst.(*oci.Store)
			for _, d := range append([]ocispec.Descriptor{a.Manifest, a.Config}, res.Manifest) {
				if ok, err := stored.Exists(ctx, d); !ok || err != nil {
					t.Errorf("dst lacks %s: %v", d.Digest, err)
				}
			}
			for _, c := range a.Charts {
				if ok, err := stored.Exists(ctx, c.Descriptor); !ok || err != nil {
					t.Errorf("dst lacks chart %s: %v", c.Path, err)
				}
				if n := src.fetches[c.Descriptor.Digest]; n != 1 {
					t.Errorf("chart %s fetched %d times, want once", c.Path, n)
				}
			}
		})
	}
}

// MaxArtifactSize bounds the config and all layers together, as the
// manifest declares them: over it, Pull refuses the artifact, naming it,
// before it fetches the config or any layer.
func TestPullEnforcesArtifactSize(t *testing.T) {
	ctx := context.Background()
	_, res := buildWithDefinitions(t)
	total := res.Config.Size
	for _, c := range res.Charts {
		total += c.Descriptor.Size
	}
	for _, d := range res.Definitions {
		total += d.Descriptor.Size
	}

	for _, tc := range []struct {
		name   string
		reason string
		change func(m *ocispec.Manifest) // nil: the built manifest
		limit  int64
		// wantSize is the size the *TooLargeError reports; 0: no error.
		wantSize, wantLimit int64
	}{
		{
			name:   "exactly the limit",
			reason: "the bound is inclusive: an artifact of exactly MaxArtifactSize pulls",
			limit:  total,
		},
		{
			name:      "one byte over",
			reason:    "one byte over the bound is refused, naming the artifact, its size and the limit",
			limit:     total - 1,
			wantSize:  total,
			wantLimit: total - 1,
		},
		{
			name:      "a layer declaring 3 GiB, default limit",
			reason:    "the declared sizes count: a layer declaring 3 GiB is refused against the default 2 GiB before any fetch",
			change:    func(m *ocispec.Manifest) { m.Layers[0].Size = 3 << 30 },
			wantSize:  total - res.Charts[0].Descriptor.Size + 3<<30,
			wantLimit: 2 << 30,
		},
		{
			name:      "sizes adding up past int64",
			reason:    "declared sizes that overflow int64 are refused, not wrapped to a small sum",
			change:    func(m *ocispec.Manifest) { m.Layers[0].Size, m.Layers[1].Size = 1<<63-1, 1<<63-1 },
			wantSize:  1<<63 - 1,
			wantLimit: 2 << 30,
		},
		{
			name:      "a negative size",
			reason:    "a negative declared size is refused, not subtracted from the sum",
			change:    func(m *ocispec.Manifest) { m.Layers[1].Size = -5 },
			wantSize:  -5,
			wantLimit: 2 << 30,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, res := buildWithDefinitions(t)
			reference, manifest := res.Tag, res.Manifest.Digest
			if tc.change != nil {
				craft(t, store, res, tc.change)
				reference = "crafted"
				desc, err := store.Resolve(ctx, reference)
				if err != nil {
					t.Fatal(err)
				}
				manifest = desc.Digest
			}
			src := &observed{ReadOnlyTarget: store}
			_, err := artifact.Pull(ctx, src, reference, memory.New(), artifact.PullOptions{MaxArtifactSize: tc.limit})
			if tc.wantSize == 0 {
				if err != nil {
					t.Fatalf("%s: Pull: %v (%s)", tc.name, err, tc.reason)
				}
				return
			}
			var tooLarge *artifact.TooLargeError
			if !errors.As(err, &tooLarge) {
				t.Fatalf("%s: Pull: %v, want a *TooLargeError (%s)", tc.name, err, tc.reason)
			}
			if want := "artifact " + manifest.String() + " (config and layers)"; tooLarge.Blob != want || tooLarge.Size != tc.wantSize || tooLarge.Limit != tc.wantLimit {
				t.Errorf("%s: TooLargeError %+v, want blob %q size %d limit %d (%s)", tc.name, tooLarge, want, tc.wantSize, tc.wantLimit, tc.reason)
			}
			if n := src.layerFetches(manifest); n != 0 {
				t.Errorf("%s: %d fetches of the config or layers before the refusal, want none (%s)", tc.name, n, tc.reason)
			}
		})
	}
}

// randomChart is artifacttest.RandomChart, failing t on an error.
func randomChart(t testing.TB, dir, name string, size int64, seed uint64) (string, ocispec.Descriptor) {
	t.Helper()
	file, desc, err := artifacttest.RandomChart(dir, name, size, seed)
	if err != nil {
		t.Fatal(err)
	}
	return file, desc
}

// Pull never holds a chart in memory: pulling an artifact with two 40 MiB
// charts of random data allocates, in all, far less than one of them
// (TotalAlloc counts every allocation, freed or not, so a chart held even
// briefly, or read into a growing buffer, shows), with a dst (an OCI
// layout, as the operator's store) and without.
func TestPullMemoryDoesNotGrowWithChartSize(t *testing.T) {
	const chartSize = 40 << 20
	const budget = 16 << 20
	ctx := context.Background()
	srcDir := t.TempDir()
	src, err := oci.New(srcDir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(ctx, testCatalog, src, build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The built artifact with its two component charts replaced by big
	// ones (the titles and chart annotations kept: Pull checks those).
	data, err := content.FetchAll(ctx, src, res.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for i := range 2 {
		file, desc := randomChart(t, tmp, fmt.Sprintf("big%d", i), chartSize, uint64(i))
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		err = src.Push(ctx, desc, f)
		f.Close()
		os.Remove(file)
		if err != nil {
			t.Fatal(err)
		}
		desc.Annotations = m.Layers[i].Annotations
		m.Layers[i] = desc
	}
	manifest := pushManifest(t, src, &m, "big")

	for _, withDst := range []bool{true, false} {
		t.Run(fmt.Sprintf("dst=%v", withDst), func(t *testing.T) {
			var dst content.Pusher
			if withDst {
				if dst, err = oci.New(t.TempDir()); err != nil {
					t.Fatal(err)
				}
			}
			opts := artifact.PullOptions{StagingDir: t.TempDir()}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			a, err := artifact.Pull(ctx, src, "big", dst, opts)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("Pull: %v", err)
			}
			if a.Manifest.Digest != manifest.Digest {
				t.Fatalf("pulled %s, want %s", a.Manifest.Digest, manifest.Digest)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("pulling 2 charts of %d MiB allocated %.1f MiB (HeapInuse %.1f → %.1f MiB)",
				chartSize>>20, float64(allocated)/(1<<20), float64(before.HeapInuse)/(1<<20), float64(after.HeapInuse)/(1<<20))
			if allocated > budget {
				t.Errorf("Pull allocated %d MiB for charts of %d MiB, want under %d MiB: a chart is held in memory", allocated>>20, chartSize>>20, budget>>20)
			}
		})
	}
}

// pushManifest pushes m to s tagged tag.
func pushManifest(t *testing.T, s oras.Target, m *ocispec.Manifest, tag string) ocispec.Descriptor {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, data)
	ctx := context.Background()
	if err := s.Push(ctx, desc, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if err := s.Tag(ctx, desc, tag); err != nil {
		t.Fatal(err)
	}
	return desc
}
