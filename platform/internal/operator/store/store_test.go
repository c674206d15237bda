package store

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/errdef"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
)

// catalogDir is the operator's acceptance catalog, contracts' test
// catalog.
const catalogDir = "../../../../contracts/artifact/testdata/catalog"

func blobExists(dir, encoded string) bool {
	_, err := os.Stat(filepath.Join(dir, "blobs", "sha256", encoded))
	return err == nil
}

// TestServeDiscardForget: a served revision survives reopening the store
// (a restart) and garbage collection; a discarded or forgotten one does
// not.
func TestServeDiscardForget(t *testing.T) {
	ctx := context.Background()
	src := memory.New()
	res, err := build.Build(ctx, catalogDir, src, build.Options{Tag: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s, err := Open(dir, artifact.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}

	a, err := s.Pull(ctx, "demo", src, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if a.Manifest.Digest != res.Manifest.Digest {
		t.Fatalf("pulled %s, built %s", a.Manifest.Digest, res.Manifest.Digest)
	}
	if _, ok, err := s.Served(ctx, "demo"); ok || err != nil {
		t.Errorf("Served before Serve: %v %v, want none", ok, err)
	}
	if err := s.Serve(ctx, "demo", a.Manifest); err != nil {
		t.Fatal(err)
	}

	// A restart: a new Store on the same directory serves the same
	// revision, verified again.
	s2, err := Open(dir, artifact.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	desc, ok, err := s2.Served(ctx, "demo")
	if err != nil || !ok || desc.Digest != a.Manifest.Digest {
		t.Fatalf("after reopening: served %v %v %v, want %s", desc.Digest, ok, err, a.Manifest.Digest)
	}
	again, err := s2.Load(ctx, desc.Digest)
	if err != nil || again.Revision() != a.Revision() || len(again.Charts) != 3 {
		t.Fatalf("Load: %v %+v", err, again)
	}
	rc, err := s2.Open(ctx, again.Charts[0].Descriptor)
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()

	// A second source pulls the same revision and discards it: the first
	// source's blobs stay.
	if _, err := s2.Pull(ctx, "other", src, "v1"); err != nil {
		t.Fatal(err)
	}
	if err := s2.Discard(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	for _, c := range again.Charts {
		if !blobExists(dir, c.Descriptor.Digest.Encoded()) {
			t.Errorf("chart %s of the served revision was collected", c.Path)
		}
	}

	// Forgetting the source collects everything.
	if err := s2.Forget(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Load(ctx, a.Manifest.Digest); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("Load after Forget: %v, want not found", err)
	}
	for _, c := range again.Charts {
		if blobExists(dir, c.Descriptor.Digest.Encoded()) {
			t.Errorf("chart %s survived Forget", c.Path)
		}
	}
}

func TestOpenNamesTheFlag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(file, artifact.PullOptions{}); err == nil {
		t.Fatal("Open on a file succeeded")
	} else if got := err.Error(); len(got) < 13 || got[:13] != "--storage-dir" {
		t.Errorf("error %q does not start with --storage-dir", got)
	}
}

// counting counts the fetches of each blob from a target.
type counting struct {
	oras.ReadOnlyTarget
	mu      sync.Mutex
	fetches map[digest.Digest]int
}

func (c *counting) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	c.mu.Lock()
	if c.fetches == nil {
		c.fetches = map[digest.Digest]int{}
	}
	c.fetches[desc.Digest]++
	c.mu.Unlock()
	return c.ReadOnlyTarget.Fetch(ctx, desc)
}

func (c *counting) count(d digest.Digest) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fetches[d]
}

func (c *counting) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.fetches {
		n += v
	}
	return n
}

// countLoads makes s's Load read through a counter.
func countLoads(s *Store) *counting {
	c := &counting{ReadOnlyTarget: s.oci}
	s.read = c
	return c
}

// TestLoadVerifiesOnce: Load does not read the charts again on every
// reconcile. After Pull it reads nothing; after a restart the first Load
// reads (verifies) every blob once and the next ones nothing. Each Load
// returns a copy its caller may change. A blob removed behind the store's
// back, and a collected revision, are noticed.
func TestLoadVerifiesOnce(t *testing.T) {
	ctx := context.Background()
	src := memory.New()
	if _, err := build.Build(ctx, catalogDir, src, build.Options{Tag: "v1"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s, err := Open(dir, artifact.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reads := countLoads(s)
	a, err := s.Pull(ctx, "demo", src, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ctx, "demo", a.Manifest); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := s.Load(ctx, a.Manifest.Digest)
		if err != nil || got.Revision() != a.Revision() || len(got.Charts) != len(a.Charts) {
			t.Fatalf("Load %d after Pull: %v %+v", i, err, got)
		}
		// The caller's copy is its own.
		got.Catalog.Variants[0].Name = "changed"
		got.Charts[0].Descriptor.Annotations["changed"] = "yes"
	}
	if n := reads.total(); n != 0 {
		t.Errorf("Load after Pull read %d blobs, want none", n)
	}
	if got, _ := s.Load(ctx, a.Manifest.Digest); got.Catalog.Variants[0].Name == "changed" || got.Charts[0].Descriptor.Annotations["changed"] != "" {
		t.Errorf("a caller's change to a loaded artifact reached the store's")
	}

	// A restart: the first Load verifies every blob, once.
	s2, err := Open(dir, artifact.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reads = countLoads(s2)
	for i := range 3 {
		if _, err := s2.Load(ctx, a.Manifest.Digest); err != nil {
			t.Fatalf("Load %d after reopening: %v", i, err)
		}
		for _, c := range a.Charts {
			if n := reads.count(c.Descriptor.Digest); n != 1 {
				t.Errorf("after %d Loads, chart %s was read %d times, want once", i+1, c.Path, n)
			}
		}
	}

	// A chart removed behind the store's back: Load verifies again and
	// says what is missing.
	chart := filepath.Join(dir, "blobs", "sha256", a.Charts[0].Descriptor.Digest.Encoded())
	if err := os.Remove(chart); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Load(ctx, a.Manifest.Digest); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("Load without a chart: %v, want not found", err)
	}

	// Forget collects the revision and forgets it was verified.
	if err := s.Forget(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	if len(s.verified) != 0 {
		t.Errorf("after Forget the store still holds %d verified artifacts", len(s.verified))
	}
	if _, err := s.Load(ctx, a.Manifest.Digest); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("Load after Forget: %v, want not found", err)
	}
}

// TestStaging: Pull stages charts in the layout's staging directory and
// leaves nothing there; garbage collection leaves the directory (and a
// file being staged in it) alone; Open empties it of what a killed process
// left.
func TestStaging(t *testing.T) {
	ctx := context.Background()
	src := memory.New()
	if _, err := build.Build(ctx, catalogDir, src, build.Options{Tag: "v1"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	staging := filepath.Join(dir, StagingDir)
	if err := os.MkdirAll(staging, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staging, "cozystack-chart-left"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, artifact.PullOptions{StagingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if s.opts.StagingDir != staging {
		t.Errorf("staging in %s, want %s", s.opts.StagingDir, staging)
	}
	if entries, err := os.ReadDir(staging); err != nil || len(entries) != 0 {
		t.Fatalf("after Open the staging directory holds %v (%v), want nothing", entries, err)
	}
	a, err := s.Pull(ctx, "demo", src, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(staging); err != nil || len(entries) != 0 {
		t.Errorf("after Pull the staging directory holds %v (%v), want nothing", entries, err)
	}
	// A file being staged while another source's revision is collected.
	busy := filepath.Join(staging, "cozystack-chart-busy")
	if err := os.WriteFile(busy, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ctx, "demo", a.Manifest); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(busy); err != nil {
		t.Errorf("garbage collection touched the staging directory: %v", err)
	}
}
