package crds

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"cozystack.io/sdk/localcp"
)

//go:embed *.yaml
var manifests embed.FS

// FS returns the manifests as a flat read-only file system.
func FS() fs.FS { return manifests }

// All returns every embedded CRD decoded strictly, a fresh object each,
// sorted by file name. An error names the file that does not decode into a
// CustomResourceDefinition (ruled out by this package's tests).
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := fs.ReadDir(manifests, ".")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		data, err := manifests.ReadFile(name)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("backup crds: decode %s: %w", name, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("backup crds: %s holds %s, want CustomResourceDefinition", name, crd.Kind)
		}
		out = append(out, crd)
	}
	return out, nil
}

// Apply applies every embedded CRD to the cluster of cfg and waits until
// each is established (localcp.ApplyCRDs): how a driver's tests, or a bare
// cluster, get backups.cozystack.io. Errors name the file or the CRD.
func Apply(ctx context.Context, cfg *rest.Config) error {
	list, err := All()
	if err != nil {
		return err
	}
	return localcp.ApplyCRDs(ctx, cfg, list...)
}
