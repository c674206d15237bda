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
	"regexp"
	"slices"
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
const ADDir = "applicationdefinitions"

// Source is a catalog as the checks read it: a directory, or a pulled
// artifact (which carries no ApplicationDefinitions).
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
	// the source cannot carry any (an artifact).
	ADs    []ADDocument
	HasADs bool
	// Problems are findings met while loading (CAT-catalog, CAT-chart).
	Problems []Finding
}

// ADDocument is one YAML document of an ApplicationDefinition file.
type ADDocument struct {
	// File is the path relative to the catalog, Line the document's first
	// line in it.
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
	files, err := filepath.Glob(filepath.Join(dir, ADDir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	more, _ := filepath.Glob(filepath.Join(dir, ADDir, "*.yml"))
	files = append(files, more...)
	slices.Sort(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel := path.Join(ADDir, filepath.Base(f))
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

var documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// splitDocuments splits a multi-document YAML file, dropping empty
// documents and keeping each one's first line.
func splitDocuments(file string, data []byte) []ADDocument {
	var out []ADDocument
	start, line := 0, 1
	emit := func(end int) {
		doc := data[start:end]
		if len(bytes.TrimSpace(stripComments(doc))) > 0 && !foreignDocument(doc) {
			out = append(out, ADDocument{File: file, Line: line, Data: doc})
		}
	}
	for _, m := range documentSeparator.FindAllIndex(data, -1) {
		emit(m[0])
		line += bytes.Count(data[start:m[1]], []byte("\n"))
		start = m[1]
	}
	emit(len(data))
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

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// LoadArtifact pulls the catalog artifact reference names in src (as
// artifact.Pull: verified) and loads its config and chart archives. An
// artifact carries no ApplicationDefinitions, so K1 and K6 cannot run on
// it (HasADs is false).
func LoadArtifact(ctx context.Context, target oras.ReadOnlyTarget, reference, name string) (*Source, error) {
	store := memory.New()
	a, err := artifact.Pull(ctx, target, reference, store, artifact.PullOptions{})
	if err != nil {
		return nil, err
	}
	src := &Source{Name: name, Catalog: a.Catalog, CatalogFile: artifact.CatalogFile, Charts: map[string]*chart.Chart{}}
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
