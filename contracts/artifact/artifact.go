package artifact

// The Artifact Pull returns: its charts, its revision, and a deep copy to
// hand out.

import (
	"maps"
	"slices"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

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
