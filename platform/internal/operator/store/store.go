package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"cozystack.io/contracts/artifact"
	"cozystack.io/platform/internal/operator/names"
)

// StagingDir is the directory, inside the layout directory, where Pull
// stages chart archives (artifact.PullOptions.StagingDir).
const StagingDir = "staging"

// Store is the layout directory. Its methods are safe for concurrent use.
type Store struct {
	oci *oci.Store
	// read is what Load verifies from: oci (a seam for tests).
	read oras.ReadOnlyTarget
	opts artifact.PullOptions
	// gc is held for reading while an artifact is pulled and tagged, and
	// for writing while garbage is collected, so a collection never
	// removes the blobs of a pull that has not tagged its manifest yet.
	gc sync.RWMutex
	// mu guards verified: the verified artifacts the store holds, by
	// manifest digest.
	mu       sync.Mutex
	verified map[digest.Digest]*artifact.Artifact
}

// Open opens (creating it if needed) the layout directory dir and its
// staging directory dir/StagingDir, emptied of what an earlier process
// left there. opts bound every pull; a StagingDir in opts is replaced by
// dir/StagingDir.
func Open(dir string, opts artifact.PullOptions) (*Store, error) {
	s, err := oci.New(dir)
	if err != nil {
		return nil, fmt.Errorf("--storage-dir %s: %w", dir, err)
	}
	staging := filepath.Join(dir, StagingDir)
	if err := os.RemoveAll(staging); err != nil {
		return nil, fmt.Errorf("--storage-dir %s: empty the staging directory: %w", dir, err)
	}
	if err := os.Mkdir(staging, 0o700); err != nil {
		return nil, fmt.Errorf("--storage-dir %s: %w", dir, err)
	}
	opts.StagingDir = staging
	return &Store{oci: s, read: s, opts: opts, verified: map[digest.Digest]*artifact.Artifact{}}, nil
}

// Pull fetches reference (a tag or digest) from src, verifies all of it
// (artifact.Pull) and stores it tagged names.PendingTag(source), replacing
// that source's previous pending revision. The caller then either Serves
// or Discards it. Errors are artifact.Pull's: *artifact.DigestMismatchError,
// *artifact.SizeMismatchError, *artifact.TooLargeError, errors wrapping
// artifact.ErrInvalidArtifact or *safetar.EntryError, and transport errors.
func (s *Store) Pull(ctx context.Context, source string, src oras.ReadOnlyTarget, reference string) (*artifact.Artifact, error) {
	s.gc.RLock()
	defer s.gc.RUnlock()
	a, err := artifact.Pull(ctx, src, reference, s.oci, s.opts)
	if err != nil {
		return nil, err
	}
	if err := s.oci.Tag(ctx, a.Manifest, names.PendingTag(source)); err != nil {
		return nil, fmt.Errorf("store %s: %w", a.Manifest.Digest, err)
	}
	s.remember(a)
	return a.DeepCopy(), nil
}

// Load returns the stored artifact whose manifest has digest d, a copy the
// caller may change. The first Load of a revision the store did not pull
// since Open (a restart) verifies it, reading every blob once
// (artifact.Pull without a destination: no chart is held in memory);
// later ones only check that its blobs are still there. It returns an
// error wrapping errdef.ErrNotFound when the store does not have it, and
// artifact.Pull's errors when what is stored does not verify.
func (s *Store) Load(ctx context.Context, d digest.Digest) (*artifact.Artifact, error) {
	s.gc.RLock()
	defer s.gc.RUnlock()
	s.mu.Lock()
	a := s.verified[d]
	s.mu.Unlock()
	if a != nil && s.present(ctx, a) {
		return a.DeepCopy(), nil
	}
	// Not verified since Open, or a blob went missing behind the store's
	// back: verify everything, which names what is missing.
	s.drop(d)
	a, err := artifact.Pull(ctx, s.read, d.String(), nil, s.opts)
	if err != nil {
		return nil, err
	}
	s.remember(a)
	return a.DeepCopy(), nil
}

// present says whether every blob of a is in the store (a stat each, no
// read).
func (s *Store) present(ctx context.Context, a *artifact.Artifact) bool {
	descs := []ocispec.Descriptor{a.Manifest, a.Config}
	for _, c := range a.Charts {
		descs = append(descs, c.Descriptor)
	}
	for _, d := range a.Definitions {
		descs = append(descs, d.Descriptor)
	}
	for _, d := range descs {
		if ok, err := s.oci.Exists(ctx, d); err != nil || !ok {
			return false
		}
	}
	return true
}

// remember keeps a, verified and in the store.
func (s *Store) remember(a *artifact.Artifact) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.verified[a.Manifest.Digest] = a
}

// drop forgets the verified artifact d.
func (s *Store) drop(d digest.Digest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.verified, d)
}

// Served returns the manifest source serves, and false when it serves
// none.
func (s *Store) Served(ctx context.Context, source string) (ocispec.Descriptor, bool, error) {
	desc, err := s.oci.Resolve(ctx, names.StoreTag(source))
	if errors.Is(err, errdef.ErrNotFound) {
		return ocispec.Descriptor{}, false, nil
	}
	return desc, err == nil, err
}

// Serve makes manifest (a revision Pull stored) the one source serves, and
// collects the revisions no source serves any more.
func (s *Store) Serve(ctx context.Context, source string, manifest ocispec.Descriptor) error {
	s.gc.RLock()
	err := s.oci.Tag(ctx, manifest, names.StoreTag(source))
	if err == nil {
		err = untag(ctx, s.oci, names.PendingTag(source))
	}
	s.gc.RUnlock()
	if err != nil {
		return fmt.Errorf("serve %s for %s: %w", manifest.Digest, source, err)
	}
	return s.collect(ctx)
}

// Discard drops source's pending revision (one that failed a later check,
// such as the platform requirements).
func (s *Store) Discard(ctx context.Context, source string) error {
	s.gc.RLock()
	err := untag(ctx, s.oci, names.PendingTag(source))
	s.gc.RUnlock()
	if err != nil {
		return err
	}
	return s.collect(ctx)
}

// Forget drops everything source served or had pending (the PackageSource
// was deleted).
func (s *Store) Forget(ctx context.Context, source string) error {
	s.gc.RLock()
	err := errors.Join(untag(ctx, s.oci, names.StoreTag(source)), untag(ctx, s.oci, names.PendingTag(source)))
	s.gc.RUnlock()
	if err != nil {
		return err
	}
	return s.collect(ctx)
}

// Open returns the bytes of the blob desc describes (for the artifact
// server). The store verified them when they were stored.
func (s *Store) Open(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	return s.oci.Fetch(ctx, desc)
}

// collect removes every blob no tagged manifest reaches, and forgets the
// verified artifacts whose manifests it removed.
func (s *Store) collect(ctx context.Context) error {
	s.gc.Lock()
	defer s.gc.Unlock()
	err := s.oci.GC(ctx)
	// Also after a failed collection, which may have removed some.
	s.mu.Lock()
	for d, a := range s.verified {
		if ok, xerr := s.oci.Exists(ctx, a.Manifest); xerr != nil || !ok {
			delete(s.verified, d)
		}
	}
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("collect unused revisions: %w", err)
	}
	return nil
}

func untag(ctx context.Context, st *oci.Store, tag string) error {
	if err := st.Untag(ctx, tag); err != nil && !errors.Is(err, errdef.ErrNotFound) {
		return fmt.Errorf("untag %s: %w", tag, err)
	}
	return nil
}
