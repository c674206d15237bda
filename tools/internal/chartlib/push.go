package chartlib

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
)

// Media types of a Helm chart in an OCI registry (helm.sh/helm/v3
// pkg/registry, v3.22.0), so that `helm pull` and `helm dependency build`
// read what Push writes.
const (
	ConfigMediaType = "application/vnd.cncf.helm.config.v1+json"
	ChartMediaType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// Push publishes lib to dst as Helm does with `helm push`: an OCI image
// manifest whose config is the chart's metadata (JSON) and whose one layer
// is the archive, tagged with the chart's version. The same archive gives
// the same manifest digest, so pushing it again changes nothing.
func Push(ctx context.Context, lib *Library, dst oras.Target) (ocispec.Descriptor, error) {
	c, err := loader.LoadArchive(bytes.NewReader(lib.Archive))
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	config, err := json.Marshal(c.Metadata)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	configDesc := content.NewDescriptorFromBytes(ConfigMediaType, config)
	layerDesc := content.NewDescriptorFromBytes(ChartMediaType, lib.Archive)
	for _, blob := range []struct {
		desc ocispec.Descriptor
		data []byte
	}{{configDesc, config}, {layerDesc, lib.Archive}} {
		if err := dst.Push(ctx, blob.desc, bytes.NewReader(blob.data)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
			return ocispec.Descriptor{}, fmt.Errorf("push %s: %w", blob.desc.Digest, err)
		}
	}
	manifest, err := oras.PackManifest(ctx, dst, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{
		ConfigDescriptor: &configDesc,
		Layers:           []ocispec.Descriptor{layerDesc},
		// A fixed time keeps the manifest (and its digest) reproducible.
		ManifestAnnotations: map[string]string{ocispec.AnnotationCreated: Generated.Format("2006-01-02T15:04:05Z")},
	})
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("push manifest: %w", err)
	}
	if err := dst.Tag(ctx, manifest, lib.Version); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("tag %s: %w", lib.Version, err)
	}
	return manifest, nil
}
