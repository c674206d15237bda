// Package store is cozystack-operator's cache of verified catalog
// artifacts: an OCI image-layout directory (--storage-dir) holding, for each
// PackageSource, the revision it serves (its last good one), tagged
// names.StoreTag(source). The artifact server reads chart archives from it
// by digest; after a restart the served revisions are still there, so a
// registry that is down never takes a served chart away (issue 5, part 3:
// "keeps the last good revision serving when a pull fails").
//
// Nothing enters the store unverified: Pull stores an artifact only after
// cozystack.io/contracts/artifact.Pull has checked every digest, size,
// media type and chart archive, so nothing is ever cached under a digest
// whose bytes did not match it.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"cozystack.io/contracts/artifact"
	"cozystack.io/platform/internal/operator/names"
)

// Store is the layout directory. Its methods are safe for concurrent use.
type Store struct {
	oci  *oci.Store
	opts artifact.PullOptions
	// gc is held for reading while an artifact is pulled and tagged, and
	// for writing while garbage is collected, so a collection never
	// removes the blobs of a pull that has not tagged its manifest yet.
	gc sync.RWMutex
}

// Open opens (creating it if needed) the layout directory dir. opts bound
// every pull.
func Open(dir string, opts artifact.PullOptions) (*Store, error) {
	s, err := oci.New(dir)
	if err != nil {
		return nil, fmt.Errorf("--storage-dir %s: %w", dir, err)
	}
	return &Store{oci: s, opts: opts}, nil
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
	return a, nil
}

// Load reads the stored artifact whose manifest has digest d, verifying it
// again. It returns an error wrapping errdef.ErrNotFound when the store
// does not have it.
func (s *Store) Load(ctx context.Context, d digest.Digest) (*artifact.Artifact, error) {
	s.gc.RLock()
	defer s.gc.RUnlock()
	return artifact.Pull(ctx, s.oci, d.String(), nil, s.opts)
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

// collect removes every blob no tagged manifest reaches.
func (s *Store) collect(ctx context.Context) error {
	s.gc.Lock()
	defer s.gc.Unlock()
	if err := s.oci.GC(ctx); err != nil {
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
