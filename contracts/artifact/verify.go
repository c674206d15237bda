package artifact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"cozystack.io/contracts/artifact/safetar"
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

// fetchChart reads chart c from f once, as a stream, never holding it in
// memory: through a content.VerifyReader (size and digest, errors as
// fetchVerified's) and safetar.Check with opts.ArchiveLimits (an error
// naming the chart and wrapping the *safetar.EntryError), and, when stage
// is not nil, into stage, which then holds the chart's bytes. A chart
// whose bytes are not its digest's is reported as such even when they are
// not a safe archive either.
//
// The same stream also goes, through a pipe, to ChartCRDFiles: every CRD
// the chart ships must be of a group of catalog (CheckChartCRDs; README.md,
// "CRD groups"), or the chart is an ErrInvalidArtifact.
func fetchChart(ctx context.Context, f content.Fetcher, c Chart, stage io.Writer, catalog *Catalog, opts PullOptions) error {
	desc, blob := c.Descriptor, "chart "+c.Path
	if err := checkDescriptor(desc, blob, opts.MaxChartSize); err != nil {
		return err
	}
	rc, err := f.Fetch(ctx, desc)
	if err != nil {
		return fmt.Errorf("fetch %s (%s): %w", blob, desc.Digest, err)
	}
	defer rc.Close()
	maxFile := opts.ArchiveLimits.MaxFileSize
	if maxFile <= 0 {
		maxFile = safetar.DefaultLimits().MaxFileSize
	}
	pr, pw := io.Pipe()
	type scanned struct {
		files []ChartFile
		err   error
	}
	scan := make(chan scanned, 1)
	go func() {
		files, err := ChartCRDFiles(pr, maxFile) // reads pr to its end
		scan <- scanned{files, err}
	}()
	var w io.Writer = pw
	if stage != nil {
		w = io.MultiWriter(stage, pw)
	}
	s := newVerifiedStream(rc, desc, blob, w)
	checkErr := safetar.Check(s, opts.ArchiveLimits)
	// Whatever Check made of it, the rest of the blob (after the end of
	// the archive, or after the entry Check refused) is read too, so that
	// the size and digest are checked over all its bytes and stage holds
	// all of them.
	finishErr := s.finish()
	_ = pw.Close()
	crds := <-scan
	if finishErr != nil {
		return finishErr
	}
	if checkErr != nil {
		return fmt.Errorf("chart %s (%s): %w", c.Path, desc.Digest, checkErr)
	}
	if crds.err == nil && catalog != nil {
		crds.err = CheckChartCRDs(catalog, c.Path, crds.files)
	}
	if crds.err != nil {
		return fmt.Errorf("%w: chart %s (%s): %v", ErrInvalidArtifact, c.Path, desc.Digest, crds.err)
	}
	return nil
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
	// desc.Size is bounded by checkDescriptor's limit, so it is safe to
	// allocate.
	buf := bytes.NewBuffer(make([]byte, 0, desc.Size))
	if err := newVerifiedStream(r, desc, blob, buf).finish(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// verifiedStream reads a blob through a content.VerifyReader, copying
// what it reads to an optional writer and hashing it, so that a digest
// mismatch can name the digest of the bytes received.
type verifiedStream struct {
	vr   *content.VerifyReader
	desc ocispec.Descriptor
	blob string
	// w receives every byte read, when not nil; werr is its first error.
	w    io.Writer
	werr error
	// n bytes were read; actual hashes them.
	n      int64
	actual digest.Digester
}

// newVerifiedStream reads the blob desc describes (desc's digest valid:
// checkDescriptor accepted it) from r, copying it to w when w is not nil.
func newVerifiedStream(r io.Reader, desc ocispec.Descriptor, blob string, w io.Writer) *verifiedStream {
	return &verifiedStream{
		vr: content.NewVerifyReader(r, desc), desc: desc, blob: blob, w: w,
		actual: desc.Digest.Algorithm().Digester(),
	}
}

// Read reads at most desc.Size bytes of the blob; fewer is
// io.ErrUnexpectedEOF.
func (s *verifiedStream) Read(p []byte) (int, error) {
	if s.werr != nil {
		return 0, s.werr
	}
	n, err := s.vr.Read(p)
	if n > 0 {
		s.n += int64(n)
		s.actual.Hash().Write(p[:n])
		if s.w != nil {
			if _, werr := s.w.Write(p[:n]); werr != nil {
				s.werr = fmt.Errorf("stage %s (%s): %w", s.blob, s.desc.Digest, werr)
				return n, s.werr
			}
		}
	}
	return n, err
}

// finish reads what is left of the blob and verifies what was read: nil
// when its size and digest are the descriptor's, else a
// *SizeMismatchError, a *DigestMismatchError, or the read (or write)
// error.
func (s *verifiedStream) finish() error {
	if _, err := io.Copy(io.Discard, s); err != nil {
		switch {
		case s.werr != nil:
			return s.werr
		case errors.Is(err, io.ErrUnexpectedEOF):
			return &SizeMismatchError{Blob: s.blob, Digest: s.desc.Digest, Expected: s.desc.Size, Actual: s.n}
		default:
			return fmt.Errorf("fetch %s (%s): %w", s.blob, s.desc.Digest, err)
		}
	}
	if err := s.vr.Verify(); err != nil {
		switch {
		case errors.Is(err, content.ErrTrailingData):
			return &SizeMismatchError{Blob: s.blob, Digest: s.desc.Digest, Expected: s.desc.Size, Actual: -1}
		case errors.Is(err, content.ErrMismatchedDigest):
			return &DigestMismatchError{Blob: s.blob, Expected: s.desc.Digest, Actual: s.actual.Digest()}
		default:
			return fmt.Errorf("fetch %s (%s): %w", s.blob, s.desc.Digest, err)
		}
	}
	return nil
}
