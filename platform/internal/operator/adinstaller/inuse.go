package adinstaller

import (
	"context"
	"fmt"
	"sort"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/appcount"
	"cozystack.io/platform/internal/operator/names"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// helmReleaseList is the list kind applications are stored as (contract
// K1): Flux HelmReleases.
var helmReleaseList = helmv2.GroupVersion.WithKind("HelmReleaseList")

// KindInUse is an application kind that a revision drops while
// applications of it exist.
type KindInUse struct {
	// Definition is the installed ApplicationDefinition that serves the
	// kind; Kind its spec.application.kind.
	Definition, Kind string
	// Namespaces counts the kind's applications per namespace.
	Namespaces map[string]int
}

func (k KindInUse) String() string {
	return fmt.Sprintf("kind %s (ApplicationDefinition %s): %s", k.Kind, k.Definition, appcount.Describe(k.Namespaces))
}

// DescribeInUse joins kinds for a condition message.
func DescribeInUse(kinds []KindInUse) string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k.String()
	}
	return strings.Join(parts, "; ")
}

// InUse returns the application kinds that installing objs for
// PackageSource source would remove while applications of them exist: a
// kind is removed when an ApplicationDefinition the source installed
// serves it and no ApplicationDefinition of objs does (the definition is
// dropped, or renamed its kind). Applications are counted by their
// HelmReleases' label v1alpha1.LabelApplicationKind, read through reader
// (uncached: metadata only, across namespaces). The result is sorted by
// kind; contract K1, "Lifecycle of a kind", says what the caller does
// with it.
func InUse(ctx context.Context, c client.Reader, reader client.Reader, source string, objs []*unstructured.Unstructured) ([]KindInUse, error) {
	kept := map[string]bool{}
	for _, o := range objs {
		if o.GroupVersionKind() == InstalledKinds[0] {
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "application", "kind")
			kept[kind] = true
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(InstalledKinds[0].GroupVersion().WithKind(InstalledKinds[0].Kind + "List"))
	if err := c.List(ctx, list, client.MatchingLabels{names.LabelPackageSource: names.LabelValue(source)}); err != nil {
		return nil, fmt.Errorf("list the ApplicationDefinitions of PackageSource %s: %w", source, err)
	}
	var out []KindInUse
	for _, ad := range list.Items {
		kind, _, _ := unstructured.NestedString(ad.Object, "spec", "application", "kind")
		if kind == "" || kept[kind] || ad.GetAnnotations()[names.AnnotationPackageSource] != source {
			continue
		}
		releases := &metav1.PartialObjectMetadataList{}
		releases.SetGroupVersionKind(helmReleaseList)
		if err := reader.List(ctx, releases, client.MatchingLabels{v1alpha1.LabelApplicationKind: kind}); err != nil {
			return nil, fmt.Errorf("count the applications of kind %s: %w", kind, err)
		}
		if len(releases.Items) == 0 {
			continue
		}
		use := KindInUse{Definition: ad.GetName(), Kind: kind, Namespaces: map[string]int{}}
		for _, hr := range releases.Items {
			use.Namespaces[hr.Namespace]++
		}
		out = append(out, use)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out, nil
}
