package artifact

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// CatalogFile is the name of the catalog metadata file in a catalog
// directory.
const CatalogFile = "catalog.yaml"

// The apiVersion and kind of catalog.yaml and of the config blob.
const (
	CatalogAPIVersion = "cozystack.io/v1alpha1"
	CatalogKind       = "Catalog"
)

// Catalog is a catalog's metadata: the schema of catalog.yaml in a catalog
// directory and, once built, of the artifact's config blob (JSON, media
// type ConfigMediaType). The operator copies it into PackageSource status.
// The field rules are in Validate; README.md documents the file.
type Catalog struct {
	// APIVersion is CatalogAPIVersion and Kind is CatalogKind.
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// CatalogInfo is the catalog's name, version, requirements and what it
	// provides.
	v1alpha1.CatalogInfo `json:",inline"`
	// Libraries are Helm library charts the build vendors into the charts
	// that depend on them through a file:// repository. In catalog.yaml
	// only path is needed; the build fills in name and version.
	Libraries []v1alpha1.PackageLibrary `json:"libraries,omitempty"`
	// Variants are the ways to install the catalog; at least one.
	Variants []v1alpha1.PackageVariant `json:"variants"`
	// Applications are the catalog's application charts: published (one
	// ExternalArtifact each, like a component's chart) for its
	// ApplicationDefinitions, which install them per tenant; never
	// installed by a Package.
	Applications []v1alpha1.PackageApplication `json:"applications,omitempty"`
}

// Application returns the application named name.
func (c *Catalog) Application(name string) (*v1alpha1.PackageApplication, bool) {
	for i := range c.Applications {
		if c.Applications[i].Name == name {
			return &c.Applications[i], true
		}
	}
	return nil, false
}

// Variant returns the variant named name.
func (c *Catalog) Variant(name string) (*v1alpha1.PackageVariant, bool) {
	for i := range c.Variants {
		if c.Variants[i].Name == name {
			return &c.Variants[i], true
		}
	}
	return nil, false
}

// ChartPaths returns the distinct chart paths the variants' components
// and then the applications use, in first-use order: the charts the
// artifact carries, one layer each.
func (c *Catalog) ChartPaths() []string {
	seen := map[string]bool{}
	var paths []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, v := range c.Variants {
		for _, comp := range v.Components {
			add(comp.Chart)
		}
	}
	for _, app := range c.Applications {
		add(app.Chart)
	}
	return paths
}

// PublishedCharts maps the name of every component (of any variant) and
// application to its chart path: the charts the platform's operator
// publishes, one ExternalArtifact per name
// (v1alpha1.ComponentArtifactName(source, name)). Validate guarantees one
// chart per name; were it broken, the first use wins.
func (c *Catalog) PublishedCharts() map[string]string {
	charts := map[string]string{}
	for _, v := range c.Variants {
		for _, comp := range v.Components {
			if _, ok := charts[comp.Name]; !ok {
				charts[comp.Name] = comp.Chart
			}
		}
	}
	for _, app := range c.Applications {
		if _, ok := charts[app.Name]; !ok {
			charts[app.Name] = app.Chart
		}
	}
	return charts
}

// DecodeCatalog decodes catalog metadata from YAML or JSON strictly: an
// unknown or misspelt field and a duplicate key are errors naming the
// field path (e.g. `unknown field "variants[0].compnents"`). It does not
// validate the values; call Validate.
func DecodeCatalog(data []byte) (*Catalog, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	if strings.TrimSpace(string(js)) == "null" {
		return nil, errors.New("empty document: want a Catalog (apiVersion, kind, name, version, minPlatformVersion, variants, applications)")
	}
	c := &Catalog{}
	strictErrs, err := sigsjson.UnmarshalStrict(js, c, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("does not decode as a Catalog: %w", err)
	}
	if len(strictErrs) > 0 {
		msgs := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			msgs[i] = e.Error()
		}
		return nil, fmt.Errorf("%s: remove the field or fix its spelling (fields: README.md in cozystack.io/contracts/artifact)", strings.Join(msgs, "; "))
	}
	return c, nil
}

// LoadCatalog reads, decodes and validates dir/catalog.yaml. Errors start
// with the file's path.
func LoadCatalog(dir string) (*Catalog, error) {
	file := filepath.Join(dir, CatalogFile)
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: not found: a catalog directory holds a %s (README.md in cozystack.io/contracts/artifact)", file, CatalogFile)
		}
		return nil, err
	}
	c, err := DecodeCatalog(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return c, nil
}
