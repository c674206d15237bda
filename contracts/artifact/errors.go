package artifact

import (
	"errors"
	"fmt"

	"github.com/opencontainers/go-digest"
)

// ErrInvalidArtifact is wrapped by every error saying the artifact is not
// a catalog of this format (artifactType, media types, layer titles,
// catalog metadata); the message names what is wrong.
var ErrInvalidArtifact = errors.New("invalid catalog artifact")

// DigestMismatchError says a blob's bytes do not hash to the digest the
// manifest (or the requested reference) gives for it: the source is
// corrupt or lying. Nothing is stored for it.
type DigestMismatchError struct {
	// Blob says which blob: "manifest", "config", "chart <chart path>"
	// or "definitions <file path>".
	Blob string
	// Expected is the digest asked for; Actual that of the bytes received.
	Expected, Actual digest.Digest
}

func (e *DigestMismatchError) Error() string {
	return fmt.Sprintf("digest mismatch: %s: expected %s, got %s", e.Blob, e.Expected, e.Actual)
}

// SizeMismatchError says a blob is shorter or longer than its descriptor
// says.
type SizeMismatchError struct {
	// Blob says which blob, as in DigestMismatchError.
	Blob   string
	Digest digest.Digest
	// Expected is the size in the descriptor, in bytes. Actual is the
	// number of bytes received, or -1 when there were more than Expected.
	Expected, Actual int64
}

func (e *SizeMismatchError) Error() string {
	if e.Actual < 0 {
		return fmt.Sprintf("size mismatch: %s (%s): expected %d bytes, got more", e.Blob, e.Digest, e.Expected)
	}
	return fmt.Sprintf("size mismatch: %s (%s): expected %d bytes, got %d", e.Blob, e.Digest, e.Expected, e.Actual)
}

// TooLargeError says a blob's descriptor declares more bytes than
// PullOptions allow (or a negative size), or that the manifest declares
// more bytes for the config and all layers together than
// PullOptions.MaxArtifactSize; what is too large is not fetched.
type TooLargeError struct {
	// Blob says which blob, as in DigestMismatchError, or, for the sum,
	// "artifact <manifest digest> (config and layers)".
	Blob string
	// Size is the declared size in bytes (for the sum, saturated at the
	// largest int64); Limit the limit in bytes.
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %d bytes exceeds the limit of %d bytes", e.Blob, e.Size, e.Limit)
}
