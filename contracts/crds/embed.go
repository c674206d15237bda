package crds

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// ApplicationDefinitionFile is the name, in FS and Files, of the manifest of
// the ApplicationDefinition CRD (cozystack.io/v1alpha1, cluster-scoped,
// named ApplicationDefinitionName).
const ApplicationDefinitionFile = "cozystack.io_applicationdefinitions.yaml"

// ApplicationDefinitionName is metadata.name of the ApplicationDefinition CRD.
const ApplicationDefinitionName = "applicationdefinitions.cozystack.io"

//go:embed *.yaml
var manifests embed.FS

// FS returns the generated manifests as a read-only file system: a flat
// directory (no subdirectories) whose entries are the files named
// <group>_<plural>.yaml, e.g. ApplicationDefinitionFile. It never returns
// nil.
func FS() fs.FS { return manifests }

// Files returns every generated manifest, keyed by file name (e.g.
// ApplicationDefinitionFile, without a directory), each value the file's
// YAML bytes. The map and the slices are fresh copies on each call; callers
// may modify them. The map is never empty.
func Files() map[string][]byte {
	entries, err := fs.ReadDir(manifests, ".")
	if err != nil {
		// The embedded root always exists; ReadDir cannot fail on it.
		panic(fmt.Sprintf("crds: read embedded manifests: %v", err))
	}
	files := make(map[string][]byte, len(entries))
	for _, e := range entries {
		data, err := manifests.ReadFile(e.Name())
		if err != nil {
			panic(fmt.Sprintf("crds: read embedded %s: %v", e.Name(), err))
		}
		files[e.Name()] = data
	}
	return files
}

// ApplicationDefinition returns the ApplicationDefinition CRD decoded from
// ApplicationDefinitionFile: a fresh object on each call, ready to create
// or update (no resourceVersion, no status). It returns an error only if
// the embedded manifest does not decode strictly into a
// CustomResourceDefinition (an unknown field, another kind), which the
// package's tests rule out for a released binary.
func ApplicationDefinition() (*apiextensionsv1.CustomResourceDefinition, error) {
	return decode(ApplicationDefinitionFile)
}

// All returns every embedded CRD decoded, a fresh object each, sorted by
// file name. It returns an error, naming the file, if a manifest does not
// decode strictly into a CustomResourceDefinition.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files := Files()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		crd, err := decode(name)
		if err != nil {
			return nil, err
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

func decode(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := manifests.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("crds: %w", err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("crds: decode %s: %w", name, err)
	}
	if crd.APIVersion != apiextensionsv1.SchemeGroupVersion.String() || crd.Kind != "CustomResourceDefinition" {
		return nil, fmt.Errorf("crds: %s holds %s %s, want %s CustomResourceDefinition",
			name, crd.APIVersion, crd.Kind, apiextensionsv1.SchemeGroupVersion)
	}
	return crd, nil
}
