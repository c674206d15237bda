package pkg

import (
	"slices"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// plannedNamespaces returns the namespaces of ds's components, sorted.
func plannedNamespaces(ds []*desired) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.component.Namespace)
	}
	return union(out)
}

// namespacesOf returns where Package p's objects may be: planned (the
// namespaces of the components it installs now), those its status records
// (status.namespaces: every namespace it wrote to and has not emptied;
// status.components: for a Package last written before status.namespaces
// existed), sorted. The operator lists and prunes a Package's namespaced
// objects there only, never cluster-wide.
func namespacesOf(p *v1alpha1.Package, planned []string) []string {
	out := slices.Clone(planned)
	out = append(out, p.Status.Namespaces...)
	for _, c := range p.Status.Components {
		if c.HelmRelease != nil {
			out = append(out, c.HelmRelease.Namespace)
		}
	}
	return union(out)
}

// union returns the distinct non-empty strings of lists, sorted.
func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, s := range l {
			if s != "" {
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
