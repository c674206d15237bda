package adinstaller

import (
	"context"
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/operator/names"
)

// Release prefixes belong to catalogs (docs/operator/catalogs.md, "Catalog delivery";
// contract K1, "The HelmRelease of an object"): an object <name> of a kind
// is stored as the HelmRelease <prefix><name> in its namespace, so two
// kinds whose prefixes are equal, or one of which starts the other
// ("vm-" and "vm-disk-": "vm-" + "disk-a" is "vm-disk-" + "a"), can name
// the same HelmRelease, and an application of one catalog would collide
// with, or be mistaken for, another catalog's. Like a kind's names, a
// prefix stays with the catalog whose definition holds it; within one
// catalog the author chooses (conformance rule K1-release-prefix).

// overlap says whether release prefixes a and b can form the same
// HelmRelease name: one starts the other (the empty prefix starts every
// prefix).
func overlap(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }

// prefixConflicts returns one conflict for each ApplicationDefinition of
// objs whose spec.release.prefix overlaps the prefix of an
// ApplicationDefinition that is not PackageSource source's (a definition
// of the same name is a conflict already, reported by Guard).
func prefixConflicts(ctx context.Context, c client.Client, source string, objs []*unstructured.Unstructured) ([]string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(InstalledKinds[0].GroupVersion().WithKind(InstalledKinds[0].Kind + "List"))
	if err := c.List(ctx, list); err != nil {
		if apimeta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, o := range objs {
		if o.GroupVersionKind() != InstalledKinds[0] {
			continue
		}
		mine := releasePrefix(o)
		for i := range list.Items {
			other := &list.Items[i]
			owner := other.GetAnnotations()[names.AnnotationPackageSource]
			if owner == source || other.GetName() == o.GetName() {
				continue
			}
			if theirs := releasePrefix(other); overlap(mine, theirs) {
				out = append(out, fmt.Sprintf("ApplicationDefinition %s (its release prefix %q and %q of %s overlap: HelmReleases <prefix><name> of the two kinds could collide; a release prefix belongs to the catalog whose definition holds it: choose a prefix no other catalog's starts or is started by)",
					o.GetName(), mine, theirs, holder{other.GetName(), owner}))
			}
		}
	}
	return out, nil
}

func releasePrefix(ad *unstructured.Unstructured) string {
	p, _, _ := unstructured.NestedString(ad.Object, "spec", "release", "prefix")
	return p
}
