package charttest

// The objects a render installs, as Helm's install reads them, which the
// injection test (injection.go) compares.

import (
	"fmt"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

// ObjectID identifies an object of a release.
type ObjectID struct {
	APIVersion, Kind, Namespace, Name string
}

func (o ObjectID) String() string {
	ns := o.Namespace
	if ns == "" {
		ns = "(release namespace)"
	}
	return fmt.Sprintf("%s %s %s/%s", o.APIVersion, o.Kind, ns, o.Name)
}

// ReleaseObjects returns the objects a render installs, as Helm's install
// reads them: partials (_*) and NOTES.txt left out, each template's
// output split at "---" lines (releaseutil.SortManifests), hooks
// included. A document that does not parse is an error, as it fails the
// install.
func ReleaseObjects(out map[string]string) ([]ObjectID, error) {
	files := map[string]string{}
	for k, v := range out {
		if !strings.HasSuffix(k, "NOTES.txt") {
			files[k] = v
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	docs := make([]string, 0, len(hooks)+len(manifests))
	for _, h := range hooks {
		docs = append(docs, h.Manifest)
	}
	for _, m := range manifests {
		docs = append(docs, m.Content)
	}
	var ids []ObjectID
	for _, d := range docs {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
			return nil, err
		}
		if obj.Kind == "" && obj.APIVersion == "" {
			continue
		}
		ids = append(ids, ObjectID{obj.APIVersion, obj.Kind, obj.Metadata.Namespace, obj.Metadata.Name})
	}
	slices.SortFunc(ids, func(a, b ObjectID) int { return strings.Compare(a.String(), b.String()) })
	return ids, nil
}
