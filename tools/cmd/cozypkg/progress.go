package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"

	"cozystack.io/contracts/artifact"
)

// progress prints one line per blob event to w. oras-go calls it from
// several goroutines, hence the lock.
type progress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *progress) event(state string, desc ocispec.Descriptor) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%-9s %s  %-28s %s\n", state, shortDigest(desc), blobLabel(desc), humanSize(desc.Size))
}

// copy copies the artifact tagged srcTag in src to dst as dstTag, blob by
// blob, reporting each: "uploading" then "done", or "exists" when dst has
// the blob already. When dst has the manifest, and so (by the registry's
// rules) all of the artifact, that is one "exists" line for the manifest.
// It returns the manifest's descriptor.
func (p *progress) copy(ctx context.Context, src oras.ReadOnlyTarget, srcTag string, dst oras.Target, dstTag string) (ocispec.Descriptor, error) {
	root, err := src.Resolve(ctx, srcTag)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	// oras-go re-tags an existing root without calling OnCopySkipped for a
	// registry, so report it here.
	rootExists, err := dst.Exists(ctx, root)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if rootExists {
		p.event("exists", root)
	}
	opts := oras.DefaultCopyOptions
	opts.PreCopy = func(_ context.Context, desc ocispec.Descriptor) error {
		p.event("uploading", desc)
		return nil
	}
	opts.PostCopy = func(_ context.Context, desc ocispec.Descriptor) error {
		p.event("done", desc)
		return nil
	}
	opts.OnCopySkipped = func(_ context.Context, desc ocispec.Descriptor) error {
		if !(rootExists && content.Equal(desc, root)) {
			p.event("exists", desc)
		}
		return nil
	}
	return oras.Copy(ctx, src, srcTag, dst, dstTag, opts)
}

func blobLabel(desc ocispec.Descriptor) string {
	switch desc.MediaType {
	case artifact.ManifestMediaType:
		return "manifest"
	case artifact.ConfigMediaType:
		return "config"
	case artifact.ChartMediaType:
		return "chart " + desc.Annotations[artifact.AnnotationTitle]
	case artifact.DefinitionMediaType:
		return "definitions " + desc.Annotations[artifact.AnnotationTitle]
	default:
		return desc.MediaType
	}
}

// shortDigest is the algorithm and the first 12 hex digits, as
// `docker images` shows them.
func shortDigest(desc ocispec.Descriptor) string {
	d := desc.Digest.String()
	if i := len(desc.Digest.Algorithm().String()) + 1 + 12; len(d) > i {
		return d[:i]
	}
	return d
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}
