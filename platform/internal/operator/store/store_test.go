package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
