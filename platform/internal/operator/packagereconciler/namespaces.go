package packagereconciler

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
)

// systemNamespaces are the namespaces of Kubernetes, the platform and Flux,
// which no component that is not privileged may install into (README.md,
// "Catalog delivery", "What a third-party catalog gets").
// Every namespace whose name begins with "kube-" is the system's too.
var systemNamespaces = []string{"default", v1alpha1.SystemNamespace, "flux-system"}

// namespaceOwner says who, other than Package p, owns namespace name: ""
// when p may install a component that is not privileged there, which is
// when the namespace does not exist yet (the operator creates it, marked
// as p's) or p created it. Otherwise "the system", "the tenant <t>",
// "Package <other>" or "nobody through the platform (it was created
// outside it)".
func (r *Reconciler) namespaceOwner(ctx context.Context, p *v1alpha1.Package, name string) (string, error) {
	if slices.Contains(systemNamespaces, name) || strings.HasPrefix(name, "kube-") {
		return "the system", nil
	}
	var ns corev1.Namespace
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &ns); apierrors.IsNotFound(err) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	if t, ok := ns.Labels[v1alpha1.LabelTenant]; ok {
		return fmt.Sprintf("the tenant %q", t), nil
	}
	switch owner := ns.Annotations[names.AnnotationPackage]; owner {
	case p.Name:
		return "", nil
	case "":
		return "nobody through the platform (it was created outside it)", nil
	default:
		return "Package " + owner, nil
	}
}

// namespaceRefusals returns, for each component of ds that is not
// privileged and would install into a namespace Package p does not own,
// "component <c>: namespace <ns> belongs to <owner>", in ds order. A
// privileged component may install anywhere: the Package's allowPrivileged
// is the cluster operator's consent.
func (r *Reconciler) namespaceRefusals(ctx context.Context, p *v1alpha1.Package, ds []*desired) ([]string, error) {
	var out []string
	for _, d := range ds {
		if d.component.Privileged {
			continue
		}
		owner, err := r.namespaceOwner(ctx, p, d.component.Namespace)
		if err != nil {
			return nil, err
		}
		if owner != "" {
			out = append(out, fmt.Sprintf("component %s: namespace %s belongs to %s", d.component.Name, d.component.Namespace, owner))
		}
	}
	return out, nil
}

// plannedNamespaces returns the namespaces of ds's components and their
// release storage namespace, sorted.
func plannedNamespaces(ds []*desired) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.component.Namespace, d.identity.StorageRole.Namespace)
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
