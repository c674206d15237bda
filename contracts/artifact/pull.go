package artifact

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"

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
