package artifact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// fetchVerified fetches the blob desc describes, at most limit bytes, and
// returns its bytes only when their size and digest are the descriptor's
// (oras-go's content.VerifyReader). blob names it in errors. A mismatch is
// a *SizeMismatchError or a *DigestMismatchError carrying the digest of
// the bytes actually received.
func fetchVerified(ctx context.Context, f content.Fetcher, desc ocispec.Descriptor, blob string, limit int64) ([]byte, error) {
	if err := checkDescriptor(desc, blob, limit); err != nil {
		return nil, err
	}
	rc, err := f.Fetch(ctx, desc)
	if err != nil {
		return nil, fmt.Errorf("fetch %s (%s): %w", blob, desc.Digest, err)
	}
	defer rc.Close()
	return readVerified(rc, desc, blob)
}

// checkDescriptor checks desc before its blob is read: a valid digest and
// a size within limit.
func checkDescriptor(desc ocispec.Descriptor, blob string, limit int64) error {
	if err := desc.Digest.Validate(); err != nil {
		return fmt.Errorf("%w: %s: digest %q: %v", ErrInvalidArtifact, blob, desc.Digest, err)
	}
	if desc.Size < 0 || desc.Size > limit {
		return &TooLargeError{Blob: blob, Size: desc.Size, Limit: limit}
	}
	return nil
}

// readVerified reads the blob desc describes from r (which checkDescriptor
// accepted) and returns its bytes only when their size and digest are the
// descriptor's.
func readVerified(r io.Reader, desc ocispec.Descriptor, blob string) ([]byte, error) {
	vr := content.NewVerifyReader(r, desc)
	// desc.Size is bounded by checkDescriptor's limit, so it is safe to
	// allocate.
	buf := bytes.NewBuffer(make([]byte, 0, desc.Size))
	if _, err := buf.ReadFrom(vr); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &SizeMismatchError{Blob: blob, Digest: desc.Digest, Expected: desc.Size, Actual: int64(buf.Len())}
		}
		return nil, fmt.Errorf("fetch %s (%s): %w", blob, desc.Digest, err)
	}
	if err := vr.Verify(); err != nil {
		switch {
		case errors.Is(err, content.ErrTrailingData):
			return nil, &SizeMismatchError{Blob: blob, Digest: desc.Digest, Expected: desc.Size, Actual: -1}
		case errors.Is(err, content.ErrMismatchedDigest):
			return nil, &DigestMismatchError{Blob: blob, Expected: desc.Digest, Actual: desc.Digest.Algorithm().FromBytes(buf.Bytes())}
		default:
			return nil, fmt.Errorf("fetch %s (%s): %w", blob, desc.Digest, err)
		}
	}
	return buf.Bytes(), nil
}
