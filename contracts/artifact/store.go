package artifact

// Pull's last step (pull.go): the verified blobs pushed into dst, and the
// staging files removed.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
)

// removeStaged removes the staging files of Pull (empty names are charts
// that had none).
func removeStaged(files []string) {
	for _, f := range files {
		if f != "" {
			_ = os.Remove(f)
		}
	}
}

// store pushes verified bytes to dst unless it has them already.
func store(ctx context.Context, dst content.Pusher, desc ocispec.Descriptor, data []byte) error {
	return storeFrom(ctx, dst, desc, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// storeFile pushes the verified staging file name to dst unless it has
// the blob already.
func storeFile(ctx context.Context, dst content.Pusher, desc ocispec.Descriptor, name string) error {
	return storeFrom(ctx, dst, desc, func() (io.ReadCloser, error) { return os.Open(name) })
}

func storeFrom(ctx context.Context, dst content.Pusher, desc ocispec.Descriptor, open func() (io.ReadCloser, error)) error {
	if s, ok := dst.(content.ReadOnlyStorage); ok {
		if exists, err := s.Exists(ctx, desc); err == nil && exists {
			return nil
		}
	}
	r, err := open()
	if err != nil {
		return fmt.Errorf("store %s: %w", desc.Digest, err)
	}
	defer r.Close()
	if err := dst.Push(ctx, desc, r); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return fmt.Errorf("store %s: %w", desc.Digest, err)
	}
	return nil
}
