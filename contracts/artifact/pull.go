package artifact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact/safetar"
)

// PullOptions bound what Pull accepts. A zero or negative field takes its
// default.
type PullOptions struct {
	// MaxManifestSize in bytes; default 4 MiB, the manifest size the OCI
	// distribution spec asks registries to accept.
	MaxManifestSize int64
	// MaxConfigSize in bytes; default 4 MiB.
	MaxConfigSize int64
	// MaxChartSize is the largest chart archive (compressed) in bytes;
	// default 100 MiB, Helm's limit on a decompressed chart.
	MaxChartSize int64
	// MaxArtifactSize is the most bytes of the config and all layers
	// together, as the manifest declares them; default 2 GiB. It is
	// checked before the config or any layer is fetched.
	MaxArtifactSize int64
	// MaxCharts is the most chart layers; default 256.
	MaxCharts int
	// MaxDefinitionSize is the largest definitions layer (one file of
	// applicationdefinitions/) in bytes; default 1 MiB.
	MaxDefinitionSize int64
	// MaxDefinitions is the most definitions layers; default 256. A
	// manifest may so have up to MaxCharts + MaxDefinitions layers.
	MaxDefinitions int
	// ArchiveLimits bound each chart archive's content (safetar.Check).
	ArchiveLimits safetar.Limits
	// Concurrency is how many layers are fetched (and, with a dst, how
	// many blobs are stored) at once; default 3, as oras-go's copy.
	Concurrency int
	// StagingDir is the directory where Pull, when given a dst, keeps
	// each verified chart archive (one file "cozystack-chart-*" per chart
	// layer, the chart's size on disk) until the whole artifact is
	// verified; default os.TempDir(). Pull removes its files before it
	// returns, also on error or cancellation. Use a directory on the file
	// system of dst's storage, with room for the largest artifact
	// (MaxArtifactSize).
	StagingDir string
}

func (o PullOptions) withDefaults() PullOptions {
	if o.MaxManifestSize <= 0 {
		o.MaxManifestSize = 4 << 20
	}
	if o.MaxConfigSize <= 0 {
		o.MaxConfigSize = 4 << 20
	}
	if o.MaxChartSize <= 0 {
		o.MaxChartSize = 100 << 20
	}
	if o.MaxArtifactSize <= 0 {
		o.MaxArtifactSize = 2 << 30
	}
	if o.MaxCharts <= 0 {
		o.MaxCharts = 256
	}
	if o.MaxDefinitionSize <= 0 {
		o.MaxDefinitionSize = 1 << 20
	}
	if o.MaxDefinitions <= 0 {
		o.MaxDefinitions = 256
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 3
	}
	if o.StagingDir == "" {
		o.StagingDir = os.TempDir()
	}
	return o
}

// Artifact is a pulled and verified catalog artifact.
type Artifact struct {
	// Manifest describes the manifest: its digest is the artifact's.
	Manifest ocispec.Descriptor
	// Annotations are the manifest's annotations.
	Annotations map[string]string
	// Config describes the config blob; Catalog is its content.
	Config  ocispec.Descriptor
	Catalog *Catalog
	// Charts are the chart layers in manifest order.
	Charts []Chart
	// Definitions are the definitions layers (the catalog's
	// ApplicationDefinitions and their policies, DefinitionMediaType) in
	// manifest order; none for an artifact that carries no definitions.
	Definitions []Definition
}

// Chart is one chart layer.
type Chart struct {
	// Path is the layer's title, the chart path components and
	// applications refer to.
	Path string
	// Name and Version are from the chart's Chart.yaml.
	Name, Version string
	// Descriptor of the chart archive (ChartMediaType).
	Descriptor ocispec.Descriptor
}

// Chart returns the chart layer titled path.
func (a *Artifact) Chart(path string) (Chart, bool) {
	for _, c := range a.Charts {
		if c.Path == path {
			return c, true
		}
	}
	return Chart{}, false
}

// Revision is "<catalog version>@<manifest digest>", the revision form
// Flux uses.
func (a *Artifact) Revision() string {
	return a.Catalog.Version + "@" + a.Manifest.Digest.String()
}

// DeepCopy returns a copy of a that shares nothing with it (descriptors,
// catalog, definition objects), for a caller that keeps a verified
// Artifact and hands it out to others who may change their copy.
func (a *Artifact) DeepCopy() *Artifact {
	if a == nil {
		return nil
	}
	out := &Artifact{
		Manifest:    copyDescriptor(a.Manifest),
		Annotations: maps.Clone(a.Annotations),
		Config:      copyDescriptor(a.Config),
		Catalog:     copyCatalog(a.Catalog),
	}
	if a.Charts != nil {
		out.Charts = make([]Chart, len(a.Charts))
		for i, c := range a.Charts {
			c.Descriptor = copyDescriptor(c.Descriptor)
			out.Charts[i] = c
		}
	}
	if a.Definitions != nil {
		out.Definitions = make([]Definition, len(a.Definitions))
		for i, d := range a.Definitions {
			d.Descriptor = copyDescriptor(d.Descriptor)
			if d.Objects != nil {
				objs := make([]*unstructured.Unstructured, len(d.Objects))
				for j, o := range d.Objects {
					objs[j] = o.DeepCopy()
				}
				d.Objects = objs
			}
			out.Definitions[i] = d
		}
	}
	return out
}

func copyDescriptor(d ocispec.Descriptor) ocispec.Descriptor {
	d.URLs = slices.Clone(d.URLs)
	d.Annotations = maps.Clone(d.Annotations)
	d.Data = slices.Clone(d.Data)
	if d.Platform != nil {
		p := *d.Platform
		p.OSFeatures = slices.Clone(p.OSFeatures)
		d.Platform = &p
	}
	return d
}

func copyCatalog(c *Catalog) *Catalog {
	if c == nil {
		return nil
	}
	out := new(Catalog)
	*out = *c
	c.CatalogInfo.DeepCopyInto(&out.CatalogInfo)
	if c.Libraries != nil {
		out.Libraries = make([]v1alpha1.PackageLibrary, len(c.Libraries))
		for i := range c.Libraries {
			c.Libraries[i].DeepCopyInto(&out.Libraries[i])
		}
	}
	if c.Variants != nil {
		out.Variants = make([]v1alpha1.PackageVariant, len(c.Variants))
		for i := range c.Variants {
			c.Variants[i].DeepCopyInto(&out.Variants[i])
		}
	}
	if c.Applications != nil {
		out.Applications = make([]v1alpha1.PackageApplication, len(c.Applications))
		for i := range c.Applications {
			c.Applications[i].DeepCopyInto(&out.Applications[i])
		}
	}
	return out
}

// Pull fetches the catalog artifact reference names in src (a tag or a
// digest; for a registry also a full host/repository:tag reference) and
// verifies all of it before storing any of it:
//   - when reference is a digest, the resolved manifest has that digest;
//   - the config and all layers together, as the manifest declares their
//     sizes, are within opts.MaxArtifactSize (a *TooLargeError for
//     "artifact <manifest digest>", before anything else is fetched);
//   - every blob (manifest, config, charts, definitions) has the size and
//     digest its descriptor gives (*SizeMismatchError,
//     *DigestMismatchError) and is within opts' limits (*TooLargeError);
//   - the manifest is an OCI image manifest with artifactType ArtifactType,
//     a config of ConfigMediaType holding a valid Catalog, and only layers
//     of ChartMediaType or DefinitionMediaType, at most opts.MaxCharts and
//     opts.MaxDefinitions of them; each chart layer is titled with a
//     distinct chart path, annotated with the chart's name and version,
//     and used by a component or an application; every component's and
//     application's chart has a layer; each definitions layer is titled
//     with a distinct file of applicationdefinitions/ (CheckDefinitionPath)
//     and decodes (DecodeDefinitionFile); all definitions together pass
//     CheckDefinitions (errors wrap ErrInvalidArtifact);
//   - every chart archive passes safetar.Check (errors wrap
//     *safetar.EntryError).
//
// An artifact without definitions layers (made before they existed) is
// valid; its Definitions are empty.
//
// Each chart layer is read once, as a stream: its size and digest are
// verified while safetar.Check reads it, and no chart is ever held in
// memory (the manifest, the config and the definitions, bounded by opts,
// are). When dst is nil, nothing is written anywhere.
//
// When dst is not nil, each chart is also written, as it is read, to a
// file in opts.StagingDir; once all of the artifact is verified, Pull
// pushes the charts (from those files), the definitions, the config and,
// last, the manifest into dst, so a manifest in dst always has all its
// blobs; on any error nothing is stored under the manifest's digest. The
// staging files are removed before Pull returns. dst should verify what it
// stores, as oras-go's stores do.
func Pull(ctx context.Context, src oras.ReadOnlyTarget, reference string, dst content.Pusher, opts PullOptions) (*Artifact, error) {
	opts = opts.withDefaults()
	manifestDesc, manifestData, err := fetchManifest(ctx, src, reference, opts.MaxManifestSize)
	if err != nil {
		return nil, err
	}
	var manifest ocispec.Manifest
	if err := json.Unmarshal(manifestData, &manifest); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrInvalidArtifact, err)
	}
	if err := checkManifest(&manifest); err != nil {
		return nil, err
	}
	if err := checkArtifactSize(manifestDesc, &manifest, opts.MaxArtifactSize); err != nil {
		return nil, err
	}

	configData, err := fetchVerified(ctx, src, manifest.Config, "config", opts.MaxConfigSize)
	if err != nil {
		return nil, err
	}
	catalog, err := DecodeCatalog(configData)
	if err == nil {
		err = catalog.ValidateBuilt()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: config %s: %v", ErrInvalidArtifact, manifest.Config.Digest, err)
	}

	charts, defs, err := layers(&manifest, catalog, opts)
	if err != nil {
		return nil, err
	}
	// staged[i] is the staging file of charts[i] (dst only); every one is
	// removed on return, whatever happens.
	var staged []string
	if dst != nil {
		staged = make([]string, len(charts))
		defer removeStaged(staged)
	}
	defBlobs := make([][]byte, len(defs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for i, c := range charts {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err // another layer failed: create no file
			}
			if dst == nil {
				return fetchChart(gctx, src, c, nil, catalog, opts)
			}
			f, err := os.CreateTemp(opts.StagingDir, "cozystack-chart-*")
			if err != nil {
				return fmt.Errorf("stage chart %s (%s): %w", c.Path, c.Descriptor.Digest, err)
			}
			staged[i] = f.Name()
			err = fetchChart(gctx, src, c, f, catalog, opts)
			if cerr := f.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("stage chart %s (%s): %w", c.Path, c.Descriptor.Digest, cerr)
			}
			return err
		})
	}
	for i := range defs {
		d := &defs[i]
		g.Go(func() error {
			data, err := fetchVerified(gctx, src, d.Descriptor, "definitions "+d.Path, opts.MaxDefinitionSize)
			if err != nil {
				return err
			}
			if d.Objects, err = DecodeDefinitionFile(d.Path, data); err != nil {
				return fmt.Errorf("%w: definitions layer %s: %v", ErrInvalidArtifact, d.Descriptor.Digest, err)
			}
			defBlobs[i] = data
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := CheckDefinitions(catalog, defs); err != nil {
		return nil, fmt.Errorf("%w: definitions: %v", ErrInvalidArtifact, err)
	}

	if dst != nil {
		// Everything is verified: store the charts, the definitions and
		// the config (in parallel, as they were fetched), then, last, the
		// manifest; nothing once ctx is done.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(opts.Concurrency)
		for i, c := range charts {
			g.Go(func() error {
				err := storeFile(gctx, dst, c.Descriptor, staged[i])
				// Free the disk as soon as dst has the chart.
				_ = os.Remove(staged[i])
				return err
			})
		}
		for i, d := range defs {
			g.Go(func() error { return store(gctx, dst, d.Descriptor, defBlobs[i]) })
		}
		g.Go(func() error { return store(gctx, dst, manifest.Config, configData) })
		if err := g.Wait(); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := store(ctx, dst, manifestDesc, manifestData); err != nil {
			return nil, err
		}
	}
	verified := content.NewDescriptorFromBytes(ManifestMediaType, manifestData)
	verified.ArtifactType = manifest.ArtifactType
	return &Artifact{
		Manifest:    verified,
		Annotations: manifest.Annotations,
		Config:      manifest.Config,
		Catalog:     catalog,
		Charts:      charts,
		Definitions: defs,
	}, nil
}

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

// removeStaged removes the staging files of Pull (empty names are charts
// that had none).
func removeStaged(files []string) {
	for _, f := range files {
		if f != "" {
			_ = os.Remove(f)
		}
	}
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
