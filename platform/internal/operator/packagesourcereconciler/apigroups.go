package packagesourcereconciler

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/platform/internal/status"
)

// CRD groups across catalogs (docs/operator/catalogs.md, "Catalog delivery", "What a
// third-party catalog gets", "CRD groups"; contracts/artifact/README.md):
// an API group belongs to the catalog that ships it first, so a catalog
// whose provides.apiGroups names a group an older PackageSource's catalog
// holds is refused (Conflict); and a group a catalog's rules name that is
// neither its own nor Kubernetes' or the platform's must be shared
// (provides.sharedAPIGroups) by a served catalog its variants depend on
// (APIGroupNotGranted). Both are checked before anything of the revision
// is published, from the PackageSources' status.catalog (which records
// each served catalog's groups), so no other catalog is pulled.

// groupError is a refusal of the served revision for its API groups.
type groupError struct {
	reason, message string
}

func (e *groupError) Error() string { return e.message }

// result is what the PackageSource reports for e.
func (e *groupError) result(revision string) status.Result {
	return status.Result{State: status.StateStalled, Reason: e.reason,
		Message: fmt.Sprintf("revision %s: %s; none of its charts was published", revision, e.message)}
}

// groupHolder is the PackageSource whose catalog holds an API group.
type groupHolder struct {
	source, catalog string
}

// holders maps every API group of a served catalog other than ps's to the
// oldest PackageSource serving it (by creation, then name).
func holders(list []v1alpha1.PackageSource, ps *v1alpha1.PackageSource) map[string]groupHolder {
	out := map[string]groupHolder{}
	srcs := slices.Clone(list)
	slices.SortFunc(srcs, func(a, b v1alpha1.PackageSource) int {
		if older(&a, &b) {
			return -1
		}
		return 1
	})
	for _, s := range srcs {
		if s.Name == ps.Name || s.Status.Catalog == nil {
			continue
		}
		for _, g := range s.Status.Catalog.Provides.APIGroups {
			if _, ok := out[g]; !ok {
				out[g] = groupHolder{s.Name, s.Status.Catalog.Name}
			}
		}
	}
	return out
}

// checkAPIGroups returns a *groupError when catalog c, served by ps,
// claims an API group an older PackageSource's catalog holds, or names in
// its rules a group no catalog it depends on shares with it.
func (r *Reconciler) checkAPIGroups(ctx context.Context, ps *v1alpha1.PackageSource, c *artifact.Catalog) error {
	var list v1alpha1.PackageSourceList
	if err := r.Client.List(ctx, &list); err != nil {
		return err
	}
	held := holders(list.Items, ps)
	for _, g := range c.Provides.APIGroups {
		h, ok := held[g]
		if !ok {
			continue
		}
		var other *v1alpha1.PackageSource
		for i := range list.Items {
			if list.Items[i].Name == h.source {
				other = &list.Items[i]
			}
		}
		if other != nil && older(other, ps) {
			return &groupError{reason: v1alpha1.ReasonConflict, message: fmt.Sprintf(
				"provides.apiGroups names %s, which belongs to catalog %s of PackageSource %s (created first): a CRD group belongs to the catalog that ships it first; the catalog's author must drop %s from provides.apiGroups and its CRDs from the charts, or the cluster operator delete one of the two PackageSources",
				g, h.catalog, h.source, g)}
		}
	}

	// Who serves each catalog a dependency may name: the oldest source.
	served := map[string]*v1alpha1.PackageSource{}
	for i := range list.Items {
		s := &list.Items[i]
		if s.Name == ps.Name || s.Status.Catalog == nil {
			continue
		}
		if cur, ok := served[s.Status.Catalog.Name]; !ok || older(s, cur) {
			served[s.Status.Catalog.Name] = s
		}
	}
	var refused []artifact.GroupUse
	for _, u := range c.ForeignGroups() {
		granted := slices.ContainsFunc(u.Dependencies, func(dep string) bool {
			s := served[dep]
			return s != nil && slices.Contains(s.Status.Catalog.Provides.SharedAPIGroups, u.Group)
		})
		if !granted {
			refused = append(refused, u)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	u := refused[0]
	owner := "no served catalog ships it"
	if h, ok := held[u.Group]; ok {
		owner = fmt.Sprintf("it belongs to catalog %s of PackageSource %s", h.catalog, h.source)
	}
	var deps []string
	for _, d := range u.Dependencies {
		switch s := served[d]; {
		case s == nil:
			deps = append(deps, d+" (not served)")
		default:
			deps = append(deps, fmt.Sprintf("%s (PackageSource %s, sharedAPIGroups %v)", d, s.Name, s.Status.Catalog.Provides.SharedAPIGroups))
		}
	}
	more := ""
	if len(refused) > 1 {
		more = fmt.Sprintf(" (and %d more rules)", len(refused)-1)
	}
	return &groupError{reason: v1alpha1.ReasonAPIGroupNotGranted, message: fmt.Sprintf(
		"%s names API group %s%s, which catalog %s neither ships (provides.apiGroups) nor is granted by a catalog it depends on (%s) and %s: the catalog that ships the group must list it in provides.sharedAPIGroups and this catalog name that one in variants[].dependsOn, or drop the rule",
		u.Field, u.Group, more, c.Name, strings.Join(deps, ", "), owner)}
}
