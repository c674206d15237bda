package artifact

// Pull's first steps (pull.go): the manifest fetched and checked, the
// declared sizes bounded, and the layers checked against the catalog.

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry"
)

// checkArtifactSize checks the sizes the manifest declares for the config
// and the layers: none negative, and together at most limit bytes.
func checkArtifactSize(desc ocispec.Descriptor, m *ocispec.Manifest, limit int64) error {
	blob := "artifact " + desc.Digest.String() + " (config and layers)"
	var total int64
	for _, d := range append([]ocispec.Descriptor{m.Config}, m.Layers...) {
		if d.Size < 0 {
			return &TooLargeError{Blob: blob, Size: d.Size, Limit: limit}
		}
		total = min(total, math.MaxInt64-d.Size) + d.Size // saturating
	}
	if total > limit {
		return &TooLargeError{Blob: blob, Size: total, Limit: limit}
	}
	return nil
}

// fetchManifest resolves reference in src and returns the manifest's
// descriptor and its verified bytes. When src can (a registry: a
// registry.ReferenceFetcher), one GET of the manifest does both, instead of
// a HEAD to resolve and a GET to fetch.
func fetchManifest(ctx context.Context, src oras.ReadOnlyTarget, reference string, limit int64) (ocispec.Descriptor, []byte, error) {
	rf, ok := src.(registry.ReferenceFetcher)
	if !ok {
		desc, err := src.Resolve(ctx, reference)
		if err != nil {
			return desc, nil, fmt.Errorf("resolve %s: %w", reference, err)
		}
		if err := checkManifestDescriptor(reference, desc); err != nil {
			return desc, nil, err
		}
		data, err := fetchVerified(ctx, src, desc, "manifest", limit)
		return desc, data, err
	}
	desc, rc, err := rf.FetchReference(ctx, reference)
	if err != nil {
		return desc, nil, fmt.Errorf("resolve %s: %w", reference, err)
	}
	defer rc.Close()
	if err := checkManifestDescriptor(reference, desc); err != nil {
		return desc, nil, err
	}
	if err := checkDescriptor(desc, "manifest", limit); err != nil {
		return desc, nil, err
	}
	data, err := readVerified(rc, desc, "manifest")
	return desc, data, err
}

// checkManifestDescriptor checks what reference resolved to: the digest
// it names, if it names one, and an OCI image manifest.
func checkManifestDescriptor(reference string, desc ocispec.Descriptor) error {
	if want, ok := referenceDigest(reference); ok && desc.Digest != want {
		return &DigestMismatchError{Blob: "manifest", Expected: want, Actual: desc.Digest}
	}
	if desc.MediaType != ManifestMediaType {
		return fmt.Errorf("%w: %s is a %q, want an OCI image manifest (%s)", ErrInvalidArtifact, reference, desc.MediaType, ManifestMediaType)
	}
	return nil
}

// referenceDigest returns the digest a reference names: "sha256:…" or
// "…@sha256:…".
func referenceDigest(reference string) (digest.Digest, bool) {
	if i := strings.LastIndex(reference, "@"); i >= 0 {
		reference = reference[i+1:]
	}
	d, err := digest.Parse(reference)
	return d, err == nil
}

func checkManifest(m *ocispec.Manifest) error {
	switch {
	case m.SchemaVersion != 2:
		return fmt.Errorf("%w: manifest schemaVersion %d, want 2", ErrInvalidArtifact, m.SchemaVersion)
	case m.MediaType != ManifestMediaType:
		return fmt.Errorf("%w: manifest mediaType %q, want %q", ErrInvalidArtifact, m.MediaType, ManifestMediaType)
	case m.ArtifactType != ArtifactType:
		return fmt.Errorf("%w: manifest artifactType %q, want %q: not a cozystack catalog, or a format this version does not read", ErrInvalidArtifact, m.ArtifactType, ArtifactType)
	case m.Config.MediaType != ConfigMediaType:
		return fmt.Errorf("%w: config mediaType %q, want %q", ErrInvalidArtifact, m.Config.MediaType, ConfigMediaType)
	}
	return nil
}

// layers checks the layers against the catalog and returns the chart
// layers and the definitions layers (without their Objects), each in
// manifest order.
func layers(m *ocispec.Manifest, catalog *Catalog, opts PullOptions) ([]Chart, []Definition, error) {
	nCharts, nDefs := 0, 0
	for _, l := range m.Layers {
		switch l.MediaType {
		case ChartMediaType:
			nCharts++
		case DefinitionMediaType:
			nDefs++
		}
	}
	if nCharts > opts.MaxCharts {
		return nil, nil, fmt.Errorf("%w: %d chart layers, the limit is %d", ErrInvalidArtifact, nCharts, opts.MaxCharts)
	}
	if nDefs > opts.MaxDefinitions {
		return nil, nil, fmt.Errorf("%w: %d definitions layers, the limit is %d", ErrInvalidArtifact, nDefs, opts.MaxDefinitions)
	}
	charts := make([]Chart, 0, nCharts)
	var defs []Definition
	byPath := map[string]bool{} // chart layers
	titles := map[string]bool{} // all layers
	for i, l := range m.Layers {
		title := l.Annotations[AnnotationTitle]
		switch {
		case l.MediaType != ChartMediaType && l.MediaType != DefinitionMediaType:
			return nil, nil, fmt.Errorf("%w: layers[%d] (%s): mediaType %q, want %q (a chart) or %q (a definitions file)", ErrInvalidArtifact, i, l.Digest, l.MediaType, ChartMediaType, DefinitionMediaType)
		case titles[title]:
			return nil, nil, fmt.Errorf("%w: layers[%d] (%s): a second layer titled %q", ErrInvalidArtifact, i, l.Digest, title)
		}
		titles[title] = true
		if l.MediaType == DefinitionMediaType {
			if err := CheckDefinitionPath(title); err != nil {
				return nil, nil, fmt.Errorf("%w: layers[%d] (%s): definitions layer: annotation %s %q: %v", ErrInvalidArtifact, i, l.Digest, AnnotationTitle, title, err)
			}
			defs = append(defs, Definition{Path: title, Descriptor: l})
			continue
		}
		c := Chart{Path: title, Name: l.Annotations[AnnotationChartName], Version: l.Annotations[AnnotationChartVersion], Descriptor: l}
		switch {
		case CheckChartPath(title) != nil:
			return nil, nil, fmt.Errorf("%w: layers[%d] (%s): annotation %s %q: %v", ErrInvalidArtifact, i, l.Digest, AnnotationTitle, title, CheckChartPath(title))
		case c.Name == "" || c.Version == "":
			return nil, nil, fmt.Errorf("%w: layers[%d] (%s): annotations %s and %s are required", ErrInvalidArtifact, i, l.Digest, AnnotationChartName, AnnotationChartVersion)
		}
		byPath[title] = true
		charts = append(charts, c)
	}
	used := map[string]bool{}
	for _, v := range catalog.Variants {
		for _, comp := range v.Components {
			if !byPath[comp.Chart] {
				return nil, nil, fmt.Errorf("%w: a component uses chart %q, but no layer is titled so", ErrInvalidArtifact, comp.Chart)
			}
			used[comp.Chart] = true
		}
	}
	for _, app := range catalog.Applications {
		if !byPath[app.Chart] {
			return nil, nil, fmt.Errorf("%w: application %q uses chart %q, but no layer is titled so", ErrInvalidArtifact, app.Name, app.Chart)
		}
		used[app.Chart] = true
	}
	for _, c := range charts {
		if !used[c.Path] {
			return nil, nil, fmt.Errorf("%w: layer %q (%s) is used by no component or application", ErrInvalidArtifact, c.Path, c.Descriptor.Digest)
		}
	}
	return charts, defs, nil
}
