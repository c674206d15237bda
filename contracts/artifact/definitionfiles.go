package artifact

// The definition files of a catalog (DefinitionsDir): finding them, and
// splitting and decoding their YAML documents.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// DefinitionFiles returns the definition files of the catalog directory
// catalogDir as slash paths relative to it, e.g.
// "applicationdefinitions/postgres.yaml": the *.yaml and *.yml entries of
// DefinitionsDir, sorted by name. None when the directory does not exist.
func DefinitionFiles(catalogDir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(catalogDir, DefinitionsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if IsDefinitionFileName(e.Name()) {
			files = append(files, path.Join(DefinitionsDir, e.Name()))
		}
	}
	slices.Sort(files)
	return files, nil
}

// IsDefinitionFileName reports whether name, a file name in
// DefinitionsDir, is a definition file: it ends in .yaml or .yml.
func IsDefinitionFileName(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// CheckDefinitionPath returns an error, saying what to change, unless s
// is the title of a definitions layer: "applicationdefinitions/<file>"
// with <file> a file name ending in .yaml or .yml, and the whole a chart
// path (CheckChartPath: clean, relative, portable characters).
func CheckDefinitionPath(s string) error {
	if s == "" {
		return fmt.Errorf("a path is required, e.g. %s/postgres.yaml", DefinitionsDir)
	}
	if err := CheckChartPath(s); err != nil {
		return err
	}
	name, ok := strings.CutPrefix(s, DefinitionsDir+"/")
	switch {
	case !ok || name == "" || strings.Contains(name, "/"):
		return fmt.Errorf("must be a file directly in %s/, e.g. %s/postgres.yaml", DefinitionsDir, DefinitionsDir)
	case !IsDefinitionFileName(name):
		return fmt.Errorf("must end in .yaml or .yml")
	}
	return nil
}

// Document is one YAML document of a multi-document file.
type Document struct {
	// Line is the line of the file the document starts on: 1 for the
	// first, the line of its "---" separator for the others. Data starts
	// on that line, so a line n of Data is line Line+n-1 of the file.
	Line int
	Data []byte
}

var documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// SplitDocuments splits a multi-document YAML file at its "---" lines,
// dropping the documents that hold nothing but comments and blank lines.
func SplitDocuments(data []byte) []Document {
	var out []Document
	start, line := 0, 1
	emit := func(end int) {
		doc := data[start:end]
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			out = append(out, Document{Line: line, Data: doc})
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

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// DecodeDefinitionFile decodes the documents of the definition file path
// (SplitDocuments) into objects, in file order. Decoding is strict about
// YAML (a duplicate key is an error) and each document must be a mapping;
// what the objects are is CheckDefinitions' business. Every document that
// does not decode is reported, as "<path>, document <n> (line <l>): ...",
// n counting the file's non-empty documents from 1.
func DecodeDefinitionFile(path string, data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	var errs []error
	for i, doc := range SplitDocuments(data) {
		obj, err := decodeDocument(doc.Data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s, document %d (line %d): %w", path, i+1, doc.Line, err))
			continue
		}
		objs = append(objs, obj)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return objs, nil
}

func decodeDocument(doc []byte) (*unstructured.Unstructured, error) {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var obj map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &obj); err != nil || obj == nil {
		return nil, errors.New("not a YAML mapping: want an object with apiVersion, kind and metadata")
	}
	return &unstructured.Unstructured{Object: obj}, nil
}
