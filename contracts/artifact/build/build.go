package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/safetar"
)

// Options tune Build.
type Options struct {
	// Tag names the manifest in the target; default TagFor(version).
	Tag string
	// Created is the manifest's org.opencontainers.image.created and the
	// mtime of every file in the chart archives. Zero means the Unix
	// epoch, which makes builds reproducible: the same catalog directory
	// gives the same digest.
	Created time.Time
}

// Result is what Build made.
type Result struct {
	// Manifest describes the artifact's manifest; its digest identifies
	// the artifact.
	Manifest ocispec.Descriptor
	// Tag names Manifest in the target.
	Tag string
	// Config describes the config blob; Catalog is its content, with the
	// libraries' names and versions filled in.
	Config  ocispec.Descriptor
	Catalog *artifact.Catalog
	// Charts are the chart layers, sorted by path.
	Charts []artifact.Chart
	// Definitions are the definitions layers (the files of
	// applicationdefinitions/), sorted by path, after the charts in the
	// manifest; none when the catalog has no such directory.
	Definitions []artifact.Definition
}

// tagPattern is the OCI distribution spec's tag grammar.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// TagFor returns the tag of a catalog version: the version with "+"
// replaced by "_", Helm's rule for chart versions in OCI registries (tags
// cannot hold "+").
func TagFor(version string) string { return strings.ReplaceAll(version, "+", "_") }

// Build reads catalogDir/catalog.yaml and the definition files of
// catalogDir/applicationdefinitions (checked with
// artifact.CheckDefinitions before anything is pushed), packages each
// chart the components and applications use (with the libraries it
// depends on vendored in) into a chart archive, and pushes the archives,
// the definition files, the config blob and the manifest to dst (any oras
// target: an OCI layout store, a memory store, a registry repository),
// then tags the manifest. Blobs dst already has are not pushed again.
// Errors name the file or field to fix.
func Build(ctx context.Context, catalogDir string, dst oras.Target, opts Options) (*Result, error) {
	cat, err := artifact.LoadCatalog(catalogDir)
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(catalogDir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, err
	}
	tag := opts.Tag
	if tag == "" {
		tag = TagFor(cat.Version)
	}
	if !tagPattern.MatchString(tag) {
		return nil, fmt.Errorf("tag %q: want letters, digits, '_', '.' and '-', at most 128, not starting with '.' or '-'", tag)
	}
	created := opts.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	created = created.UTC().Truncate(time.Second)
	defs, err := loadDefinitions(root)
	if err == nil {
		err = artifact.CheckDefinitions(cat, publicDefinitions(defs))
	}
	if err != nil {
		return nil, fmt.Errorf("%s/ does not pass the checks of the platform (README.md in cozystack.io/contracts/artifact, \"Definitions\"):\n%w", artifact.DefinitionsDir, err)
	}

	libs := map[string]string{}
	for i := range cat.Libraries {
		lib := &cat.Libraries[i]
		name, version, err := loadLibrary(root, lib.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: libraries[%d]: %w", artifact.CatalogFile, i, err)
		}
		if (lib.Name != "" && lib.Name != name) || (lib.Version != "" && lib.Version != version) {
			return nil, fmt.Errorf("%s: libraries[%d]: says %s %s, but %s/Chart.yaml is %s %s: fix or drop name and version in %s",
				artifact.CatalogFile, i, lib.Name, lib.Version, lib.Path, name, version, artifact.CatalogFile)
		}
		lib.Name, lib.Version = name, version
		libs[lib.Path] = version
	}

	paths := cat.ChartPaths()
	slices.Sort(paths)
	charts := make([]artifact.Chart, 0, len(paths))
	layers := make([]ocispec.Descriptor, 0, len(paths)+len(defs))
	for _, p := range paths {
		c, err := loadChart(root, p, libs)
		if err != nil {
			return nil, err
		}
		data, err := archive(c, created)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", p, err)
		}
		// The archive as Pull reads it: the same check, on the same files.
		files, err := artifact.ChartCRDFiles(bytes.NewReader(data), safetar.DefaultLimits().MaxFileSize)
		if err == nil {
			err = artifact.CheckChartCRDs(cat, p, files)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", artifact.CatalogFile, err)
		}
		desc := content.NewDescriptorFromBytes(artifact.ChartMediaType, data)
		desc.Annotations = map[string]string{
			artifact.AnnotationTitle:        p,
			artifact.AnnotationChartName:    c.Name(),
			artifact.AnnotationChartVersion: c.Metadata.Version,
		}
		if err := push(ctx, dst, desc, data); err != nil {
			return nil, err
		}
		layers = append(layers, desc)
		charts = append(charts, artifact.Chart{Path: p, Name: c.Name(), Version: c.Metadata.Version, Descriptor: desc})
	}

	for _, d := range defs {
		if err := push(ctx, dst, d.Descriptor, d.data); err != nil {
			return nil, err
		}
		layers = append(layers, d.Descriptor)
	}
	if err := cat.ValidateBuilt(); err != nil {
		return nil, fmt.Errorf("%s: %w", artifact.CatalogFile, err)
	}
	configData, err := json.Marshal(cat)
	if err != nil {
		return nil, err
	}
	config := content.NewDescriptorFromBytes(artifact.ConfigMediaType, configData)
	if err := push(ctx, dst, config, configData); err != nil {
		return nil, err
	}
	manifest, err := oras.PackManifest(ctx, dst, oras.PackManifestVersion1_1, artifact.ArtifactType, oras.PackManifestOptions{
		ConfigDescriptor: &config,
		Layers:           layers,
		ManifestAnnotations: map[string]string{
			artifact.AnnotationTitle:              cat.Name,
			artifact.AnnotationVersion:            cat.Version,
			artifact.AnnotationCreated:            created.Format(time.RFC3339),
			artifact.AnnotationMinPlatformVersion: cat.MinPlatformVersion,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("push manifest: %w", err)
	}
	if err := dst.Tag(ctx, manifest, tag); err != nil {
		return nil, fmt.Errorf("tag %s: %w", tag, err)
	}
	return &Result{Manifest: manifest, Tag: tag, Config: config, Catalog: cat, Charts: charts, Definitions: publicDefinitions(defs)}, nil
}

func publicDefinitions(defs []definition) []artifact.Definition {
	out := make([]artifact.Definition, len(defs))
	for i, d := range defs {
		out[i] = d.Definition
	}
	return out
}

func push(ctx context.Context, dst oras.Target, desc ocispec.Descriptor, data []byte) error {
	exists, err := dst.Exists(ctx, desc)
	if err != nil {
		return fmt.Errorf("check %s: %w", desc.Digest, err)
	}
	if exists {
		return nil
	}
	if err := dst.Push(ctx, desc, bytes.NewReader(data)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return fmt.Errorf("push %s: %w", desc.Digest, err)
	}
	return nil
}
