package build

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"oras.land/oras-go/v2/content"

	"cozystack.io/contracts/artifact"
)

// definition is a definitions layer to push and its bytes.
type definition struct {
	artifact.Definition
	data []byte
}

// loadDefinitions reads and decodes the definition files of the catalog
// directory root (artifact.DefinitionFiles), each a layer of
// artifact.DefinitionMediaType titled with its path, its bytes as they
// are: the same files give the same digests. A file that is not a regular
// file inside root, or that does not decode, is an error naming it; all
// are reported at once.
func loadDefinitions(root string) ([]definition, error) {
	files, err := artifact.DefinitionFiles(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", artifact.DefinitionsDir, err)
	}
	var defs []definition
	var errs []error
	for _, rel := range files {
		data, err := readInside(root, rel)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		objs, err := artifact.DecodeDefinitionFile(rel, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		desc := content.NewDescriptorFromBytes(artifact.DefinitionMediaType, data)
		desc.Annotations = map[string]string{artifact.AnnotationTitle: rel}
		defs = append(defs, definition{artifact.Definition{Path: rel, Descriptor: desc, Objects: objs}, data})
	}
	return defs, errors.Join(errs...)
}

// readInside reads the regular file at rel (slash-separated) in root,
// refusing one that resolves outside root.
func readInside(root, rel string) ([]byte, error) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if !inside(root, real) {
		return nil, fmt.Errorf("%s: links to %s, outside the catalog directory; copy the file instead", rel, real)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file: %s/ holds definition files (*.yaml, *.yml)", rel, artifact.DefinitionsDir)
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	return data, nil
}
