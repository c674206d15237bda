package applicationdefinitions

import (
	"embed"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"cozystack.io/platform/internal/manifests"
)

//go:embed *.yaml
var files embed.FS

// Objects returns every object of every embedded file, in file-name order
// and document order within a file: fresh objects on each call. The error
// names the file and document that does not decode.
func Objects() ([]*unstructured.Unstructured, error) {
	return manifests.Decode(files)
}
