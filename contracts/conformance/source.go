package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/artifact"
)

// ADDir is the directory of a catalog holding its ApplicationDefinitions,
// one or more YAML documents per file; documents of other API groups (the
// policies a kind ships beside its AD) are left out.
const ADDir = artifact.DefinitionsDir

// Source is a catalog as the checks read it: a directory, or a pulled
// artifact (which carries the ApplicationDefinitions as definitions
// layers, unless it was built before they existed).
type Source struct {
	// Name is the directory or the reference, for reports.
	Name string
	// Catalog is catalog.yaml (or the artifact's config), nil when it did
	// not decode or validate (Problems says why).
	Catalog *artifact.Catalog
	// CatalogFile is catalog.yaml's path and CatalogYAML its bytes (nil
	// for an artifact, whose config is JSON without comments).
	CatalogFile string
	CatalogYAML []byte
	// Charts are the charts catalog.yaml names, by chart path
	// (e.g. charts/postgres).
	Charts map[string]*chart.Chart
	// ADs are the ApplicationDefinition documents; HasADs is false when
	// the source carries none (an artifact without definitions layers).
	ADs    []ADDocument
	HasADs bool
	// Problems are findings met while loading (CAT-catalog, CAT-chart).
	Problems []Finding
}

// ADDocument is one YAML document of an ApplicationDefinition file.
type ADDocument struct {
	// File is the path relative to the catalog (for an artifact, the
	// definitions layer's title, the same path), Line the document's
	// first line in it (artifact.Document).
	File string
	Line int
	Data []byte
}

// LoadDir reads the catalog directory dir: catalog.yaml, the charts it
// names and applicationdefinitions/*.yaml. What is wrong inside the
// catalog is returned as Problems; the error is for a directory that
// cannot be read at all.
func LoadDir(dir string) (*Source, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	src := &Source{Name: dir, CatalogFile: artifact.CatalogFile, Charts: map[string]*chart.Chart{}, HasADs: true}
	data, err := os.ReadFile(filepath.Join(dir, artifact.CatalogFile))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		src.Problems = append(src.Problems, Finding{RuleID: "CAT-catalog", Severity: Error, File: artifact.CatalogFile,
			Message: "not found: a catalog directory holds catalog.yaml", Fix: "run the check on a catalog directory, or create catalog.yaml (contracts/artifact/README.md)"})
	} else {
		src.CatalogYAML = data
		src.Catalog = decodeCatalog(src, data)
	}
	if src.Catalog != nil {
		for _, p := range src.Catalog.ChartPaths() {
			c, err := loader.LoadDir(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				src.Problems = append(src.Problems, Finding{RuleID: "CAT-chart", Severity: Error, File: p, Message: fmt.Sprintf("chart does not load: %v", err),
					Fix: "fix the chart directory catalog.yaml names (Chart.yaml, templates)"})
				continue
			}
			src.Charts[p] = c
		}
	}
	files, err := artifact.DefinitionFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		src.ADs = append(src.ADs, splitDocuments(rel, data)...)
	}
	return src, nil
}

// LoadADFiles reads ApplicationDefinition files outside a catalog (for
// CheckADFiles); paths in findings are relative to root.
func LoadADFiles(root string, files []string) (*Source, error) {
	src := &Source{Name: root, HasADs: true}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(root, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = f
		}
		src.ADs = append(src.ADs, splitDocuments(filepath.ToSlash(rel), data)...)
	}
	return src, nil
}

func decodeCatalog(src *Source, data []byte) *artifact.Catalog {
	c, err := artifact.DecodeCatalog(data)
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		src.Problems = append(src.Problems, Finding{RuleID: "CAT-catalog", Severity: Error, File: src.CatalogFile,
			Message: err.Error(), Fix: "correct catalog.yaml as the message says (format: contracts/artifact/README.md); the other checks need it"})
		return nil
	}
	return c
}

// splitDocuments splits a multi-document YAML file
// (artifact.SplitDocuments: empty documents dropped, each one's first line
// kept) and leaves out the documents of other API groups.
func splitDocuments(file string, data []byte) []ADDocument {
	var out []ADDocument
	for _, d := range artifact.SplitDocuments(data) {
		if !foreignDocument(d.Data) {
			out = append(out, ADDocument{File: file, Line: d.Line, Data: d.Data})
		}
	}
	return out
}

// foreignDocument is true for a document of another API group than
// cozystack.io, such as the ValidatingAdmissionPolicy a kind ships beside
// its AD (K1): it is not an ApplicationDefinition and not checked as one.
func foreignDocument(doc []byte) bool {
	var head struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil || head.APIVersion == "" {
		return false
	}
	group, _, found := strings.Cut(head.APIVersion, "/")
	return found && group != "cozystack.io" || !found
}

// LoadArtifact pulls the catalog artifact reference names in src (as
// artifact.Pull: verified) and loads its config, chart archives and
// definitions. The ApplicationDefinitions of its definitions layers are
// its ADs, File being the layer's title; an artifact without definitions
// layers (built before they existed) has none, so K1 and K6 cannot run
// on it (HasADs is false).
func LoadArtifact(ctx context.Context, target oras.ReadOnlyTarget, reference, name string) (*Source, error) {
	store := memory.New()
	a, err := artifact.Pull(ctx, target, reference, store, artifact.PullOptions{})
	if err != nil {
		return nil, err
	}
	src := &Source{Name: name, Catalog: a.Catalog, CatalogFile: artifact.CatalogFile, Charts: map[string]*chart.Chart{}, HasADs: len(a.Definitions) > 0}
	for _, c := range a.Charts {
		data, err := content.FetchAll(ctx, store, c.Descriptor)
		if err != nil {
			return nil, err
		}
		ch, err := loader.LoadArchive(bytes.NewReader(data))
		if err != nil {
			src.Problems = append(src.Problems, Finding{RuleID: "CAT-chart", Severity: Error, File: c.Path,
				Message: fmt.Sprintf("chart archive %s does not load: %v", c.Descriptor.Digest, err), Fix: "rebuild and push the catalog"})
			continue
		}
		src.Charts[c.Path] = ch
	}
	for _, d := range a.Definitions {
		data, err := content.FetchAll(ctx, store, d.Descriptor)
		if err != nil {
			return nil, err
		}
		src.ADs = append(src.ADs, splitDocuments(d.Path, data)...)
	}
	return src, nil
}

// chartFile returns the path of name (a chart file name such as
// templates/x.yaml) of the chart at chartPath, relative to the catalog.
func chartFile(chartPath, name string) string { return path.Join(chartPath, name) }

// rawFile returns the bytes of the chart's file name (Chart.yaml,
// values.schema.json), or nil.
func rawFile(c *chart.Chart, name string) []byte {
	for _, f := range c.Raw {
		if f.Name == name {
			return f.Data
		}
	}
	if name == "values.schema.json" {
		return c.Schema
	}
	return nil
}
