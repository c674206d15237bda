package adinstaller

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"cozystack.io/contracts/artifact"
)

// ServedNames maps every resource name, singular name and short name the
// API serves (discovery, as `kubectl api-resources` lists it) outside
// artifact.ApplicationsGroup to the resource, "<plural>.<group>" ("pods"
// for the core group). Subresources are skipped; cozystack-api's own
// kinds are the ApplicationDefinitions', which Guard compares.
func ServedNames(lists []*metav1.APIResourceList) map[string]string {
	out := map[string]string{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil || gv.Group == artifact.ApplicationsGroup {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			res := r.Name
			if gv.Group != "" {
				res += "." + gv.Group
			}
			for _, n := range append([]string{r.Name, r.SingularName}, r.ShortNames...) {
				if _, seen := out[n]; n != "" && !seen {
					out[n] = res
				}
			}
		}
	}
	return out
}

// Shadowing returns a *ConflictError when an ApplicationDefinition of objs
// has a plural, singular or short name that served (ServedNames) holds:
// the application kind would shadow that resource for kubectl, or be
// shadowed by it (docs/operator/catalogs.md, "Catalog delivery", "What a third-party
// catalog gets"). The error names the definition, the name and the
// resource.
func Shadowing(objs []*unstructured.Unstructured, served map[string]string) error {
	var conflicts []string
	for _, o := range objs {
		if o.GroupVersionKind() != InstalledKinds[0] {
			continue
		}
		app, _, _ := unstructured.NestedMap(o.Object, "spec", "application")
		check := func(field, name string) {
			if res, ok := served[name]; ok && name != "" {
				conflicts = append(conflicts, fmt.Sprintf("ApplicationDefinition %s (its %s %q is a name of the served resource %s: an application's names may not shadow another resource's; choose another)",
					o.GetName(), field, name, res))
			}
		}
		for _, f := range []string{"plural", "singular"} {
			n, _ := app[f].(string)
			check(f, n)
		}
		short, _, _ := unstructured.NestedStringSlice(app, "shortNames")
		for _, n := range short {
			check("short name", n)
		}
	}
	if len(conflicts) == 0 {
		return nil
	}
	sort.Strings(conflicts)
	return &ConflictError{Objects: conflicts}
}
