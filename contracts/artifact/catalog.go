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
// use, in first-use order.
func (c *Catalog) ChartPaths() []string {
	seen := map[string]bool{}
	var paths []string
	for _, v := range c.Variants {
		for _, comp := range v.Components {
			if !seen[comp.Chart] {
				seen[comp.Chart] = true
				paths = append(paths, comp.Chart)
			}
		}
	}
	return paths
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
		return nil, errors.New("empty document: want a Catalog (apiVersion, kind, name, version, minPlatformVersion, variants)")
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
