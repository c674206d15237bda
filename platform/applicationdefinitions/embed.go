// Package applicationdefinitions holds the platform's own application kinds
// (contract K1): their ApplicationDefinitions and the admission policies
// shipped with them, embedded so that the platform installs them without
// reading any file at run time.
//
// Each *.yaml file holds one or more YAML documents; the charts they serve
// are under platform/charts.
package applicationdefinitions

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

//go:embed *.yaml
var files embed.FS

// Objects returns every object of every embedded file, in file-name order
// and document order within a file: fresh objects on each call. The error
// names the file and document that does not decode.
func Objects() ([]*unstructured.Unstructured, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var out []*unstructured.Unstructured
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for doc := 1; ; doc++ {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s, document %d: %w", name, doc, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			out = append(out, u)
		}
	}
	return out, nil
}
