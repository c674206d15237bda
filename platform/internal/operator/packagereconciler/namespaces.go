package packagereconciler

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
)

// A namespace belongs to exactly one Package from the moment it is claimed
// (docs/operator/catalogs.md, "Catalog delivery", "Ownership"). The claim is the Namespace
// itself, created by the operator (Create is atomic: of two Packages
// claiming one name, the second gets AlreadyExists and checks again) and
// annotated with the owner's name, UID and catalog (names.AnnotationPackage,
// AnnotationPackageUID, AnnotationCatalog); Packages sharing it by mutual
// consent are listed in names.AnnotationSharedWith. Every component,
// privileged or not, goes through the same check: allowPrivileged consents
// to rights, never to another Package's namespace. Reserved names
// (v1alpha1.ReservedNamespace) are refused outright, so a Package's release
// storage namespace (cozy-releases-*) is its own before it exists.

// claim is one Package recorded on a Namespace.
type claim struct {
	Package string    `json:"package"`
	UID     types.UID `json:"uid"`
	Catalog string    `json:"catalog"`
}

// other is what namespaceOwner needs to know of a Package that exists.
type other struct {
	uid     types.UID
	spec    *v1alpha1.PackageSpec
	catalog string
	// declares reports whether its catalog declares a component in the
	// namespace being decided.
	declares bool
}

// verdict is namespaceOwner's decision on one namespace.
type verdict struct {
	// refusal is "" when the Package may install there, else
	// "namespace <ns> belongs to <owner>: <fix>" (or the reserved rule).
	refusal string
	// claims are the claims to record, the owner first (the Package's own
	// included), when refusal is "".
	claims []claim
	// exists says the Namespace exists (else it is created).
	exists bool
}

// namespaceOwner decides whether Package me (of catalog me.Catalog, with
// spec) may install into namespace name, which is ns (nil when it does not
// exist); storage says name is me's release storage namespace, exempt from
// the reserved names. lookup returns the Package of that name that
// exists, or nil. The rules:
//   - a reserved name (v1alpha1.ReservedNamespace) is refused;
//   - absent: claimable (the operator creates it, claimed for me);
//   - a tenant's (v1alpha1.LabelTenant) or one without a claim (made by
//     hand, or by the system): refused;
//   - each claim: me's own (its UID) is kept; one of a Package that
//     exists needs mutual consent (both specs' sharedNamespaces name the
//     other for name) and that its catalog declares a component in name;
//     one of a Package that no longer exists (not found, or found with
//     another UID) is taken over by a Package of the same catalog (a
//     reinstall; for the release storage namespace, one of the same
//     name), kept if me already shares the namespace, else refused
//     naming the deleted Package and its catalog.
//
// A claim made before claims carried a UID (the name only) is the claim of
// the Package of that name if it exists (migration: its UID and catalog
// are written with the next claim), else of a deleted Package of unknown
// catalog, which only a Package of the same name takes over.
func namespaceOwner(me claim, spec *v1alpha1.PackageSpec, name string, storage bool, ns *corev1.Namespace, lookup func(string) *other) verdict {
	if rule := v1alpha1.ReservedNamespace(name); rule != "" && !storage {
		return verdict{refusal: rule + ", for every component (privileged or not): the catalog's author must give it a namespace of its own"}
	}
	if ns == nil {
		return verdict{claims: []claim{me}}
	}
	if t, ok := ns.Labels[v1alpha1.LabelTenant]; ok {
		return verdict{refusal: fmt.Sprintf("namespace %s belongs to the tenant %q: a component never installs into a tenant namespace; the catalog's author must give it a namespace of its own", name, t)}
	}
	claims := namespaceClaims(ns, lookup)
	if len(claims) == 0 {
		return verdict{refusal: fmt.Sprintf("namespace %s belongs to nobody through the platform (it was created outside it): the operator installs only into a namespace it creates for the Package; the catalog's author must give the component another namespace, or the cluster operator delete this one", name)}
	}
	mine := slices.ContainsFunc(claims, func(c claim) bool { return c.UID == me.UID })
	v := verdict{exists: true}
	for _, c := range claims {
		if c.UID == me.UID {
			v.claims = append(v.claims, me)
			continue
		}
		o := lookup(c.Package)
		if o != nil && o.uid == c.UID {
			if msg := consent(me.Package, spec, c, o, name); msg != "" {
				return verdict{refusal: msg}
			}
			v.claims = append(v.claims, c)
			continue
		}
		// A deleted Package's claim.
		switch {
		case c.Catalog == "" && c.Package == me.Package, c.Catalog != "" && c.Catalog == me.Catalog,
			// Release storage is named after the Package alone.
			storage && c.Package == me.Package:
			continue // taken over: me replaces it
		case mine:
			v.claims = append(v.claims, c)
			continue
		}
		catalog := "of catalog " + c.Catalog
		if c.Catalog == "" {
			catalog = "of an unknown catalog"
		}
		return verdict{refusal: fmt.Sprintf("namespace %s belongs to Package %s (deleted), %s: only a Package of that catalog may install there again; the catalog's author must give the component another namespace, or the cluster operator delete this one",
			name, c.Package, catalog)}
	}
	if !mine {
		v.claims = append(v.claims, me)
	}
	return v
}

// consent returns "" when Package me (with spec) may share namespace with
// o, the Package that exists behind claim c, else the refusal saying what
// to set on which Package.
func consent(me string, spec *v1alpha1.PackageSpec, c claim, o *other, namespace string) string {
	head := fmt.Sprintf("namespace %s belongs to Package %s (catalog %s)", namespace, c.Package, c.Catalog)
	if !o.declares {
		return head + ": its catalog declares no component there, so it is not shared; the catalog's author must give the component a namespace of its own"
	}
	var missing []string
	if !spec.SharesWith(namespace, c.Package) {
		missing = append(missing, fmt.Sprintf("on Package %s (this one) spec.sharedNamespaces: [{namespace: %s, packages: [%s]}]", me, namespace, c.Package))
	}
	if !o.spec.SharesWith(namespace, me) {
		missing = append(missing, fmt.Sprintf("on Package %s spec.sharedNamespaces: [{namespace: %s, packages: [%s]}]", c.Package, namespace, me))
	}
	if len(missing) == 0 {
		return ""
	}
	return head + ": two Packages share a namespace only when both catalogs declare it and both consent; to share it set " + strings.Join(missing, " and ")
}

// namespaceClaims returns the claims recorded on ns, the owner first; a
// name-only claim (made before claims carried a UID) gets the UID and
// catalog of the Package of that name that exists.
func namespaceClaims(ns *corev1.Namespace, lookup func(string) *other) []claim {
	a := ns.Annotations
	owner := a[names.AnnotationPackage]
	if owner == "" {
		return nil
	}
	first := claim{Package: owner, UID: types.UID(a[names.AnnotationPackageUID]), Catalog: a[names.AnnotationCatalog]}
	if first.UID == "" {
		// Claimed before claims carried a UID: the Package of that name,
		// if it exists, made it.
		if o := lookup(owner); o != nil {
			first.UID, first.Catalog = o.uid, o.catalog
		}
	}
	out := []claim{first}
	var shared []claim
	if raw := a[names.AnnotationSharedWith]; raw != "" && json.Unmarshal([]byte(raw), &shared) == nil {
		out = append(out, shared...)
	}
	return out
}

// claimMeta writes claims (the owner first) onto ns's annotations.
func claimMeta(ns *corev1.Namespace, claims []claim) {
	if ns.Annotations == nil {
		ns.Annotations = map[string]string{}
	}
	ns.Annotations[names.AnnotationPackage] = claims[0].Package
	ns.Annotations[names.AnnotationPackageUID] = string(claims[0].UID)
	ns.Annotations[names.AnnotationCatalog] = claims[0].Catalog
	if len(claims) > 1 {
		raw, _ := json.Marshal(claims[1:])
		ns.Annotations[names.AnnotationSharedWith] = string(raw)
	} else {
		delete(ns.Annotations, names.AnnotationSharedWith)
	}
}

// nsPlan is what install decided for one namespace of a Package.
type nsPlan struct {
	name    string
	storage bool
	// components are the components installing there, for messages.
	components []string
	// releases are the HelmReleases of the Package installing there.
	releases []string
	verdict  verdict
}

// namespacePlans decides every namespace of ds (the components' and the
// release storage namespace) for Package p of catalog, reading the
// Namespaces from the cache; views are the Packages whose own checks pass.
func (r *Reconciler) namespacePlans(ctx context.Context, p *v1alpha1.Package, catalog string, ds []*desired, views map[string]*view) ([]*nsPlan, error) {
	byName := map[string]*nsPlan{}
	var order []*nsPlan
	add := func(name string, storage bool) *nsPlan {
		if np, ok := byName[name]; ok {
			return np
		}
		np := &nsPlan{name: name, storage: storage}
		byName[name] = np
		order = append(order, np)
		return np
	}
	for _, d := range ds {
		np := add(d.component.Namespace, false)
		np.components = append(np.components, d.component.Name)
		np.releases = append(np.releases, d.component.Release)
		add(d.identity.StorageRole.Namespace, true)
	}
	for _, np := range order {
		ns, err := r.namespace(ctx, r.Client, np.name)
		if err != nil {
			return nil, err
		}
		np.verdict = r.decide(ctx, p, catalog, np, ns, views)
	}
	return order, nil
}

// decide runs namespaceOwner for np with the Packages that exist.
func (r *Reconciler) decide(ctx context.Context, p *v1alpha1.Package, catalog string, np *nsPlan, ns *corev1.Namespace, views map[string]*view) verdict {
	lookup := func(name string) *other {
		var o v1alpha1.Package
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &o); err != nil {
			return nil
		}
		out := &other{uid: o.UID, spec: &o.Spec}
		if v := views[name]; v != nil {
			out.catalog = v.catalog()
			for _, c := range v.enabled {
				out.declares = out.declares || c.Namespace == np.name
			}
		} else {
			// Its source serves no revision now: what it installed counts.
			out.declares = slices.Contains(o.Status.Namespaces, np.name)
		}
		return out
	}
	me := claim{Package: p.Name, UID: p.UID, Catalog: catalog}
	return namespaceOwner(me, &p.Spec, np.name, np.storage, ns, lookup)
}

// namespace reads Namespace name through reader, nil when it does not
// exist.
func (r *Reconciler) namespace(ctx context.Context, reader client.Reader, name string) (*corev1.Namespace, error) {
	var ns corev1.Namespace
	if err := reader.Get(ctx, client.ObjectKey{Name: name}, &ns); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &ns, nil
}

// refusals returns, for each plan refused, "component <c>: <refusal>" (or
// "release storage: ..."), in plan order.
func refusals(plans []*nsPlan) []string {
	var out []string
	for _, np := range plans {
		if np.verdict.refusal == "" {
			continue
		}
		who := "release storage"
		if len(np.components) > 0 {
			who = "component " + strings.Join(np.components, ", ")
		}
		out = append(out, who+": "+np.verdict.refusal)
	}
	return out
}

// claimNamespaces records p's claim on every namespace of plans (all
// passed namespacePlans): each is read again from the API and decided
// anew, then created claimed for p (Create is atomic: of two claimants
// the second gets AlreadyExists), or its claims updated with the
// resourceVersion read (a change in between is a Conflict); either way
// it is read and decided again, so a claim is never written over one it
// was not decided on. It returns the refusals met that way.
func (r *Reconciler) claimNamespaces(ctx context.Context, p *v1alpha1.Package, catalog string, plans []*nsPlan, views map[string]*view) ([]string, error) {
	for _, np := range plans {
		for attempt := 0; ; attempt++ {
			ns, err := r.namespace(ctx, r.APIReader, np.name)
			if err != nil {
				return nil, err
			}
			np.verdict = r.decide(ctx, p, catalog, np, ns, views)
			if np.verdict.refusal != "" {
				return refusals([]*nsPlan{np}), nil
			}
			err = r.claimOne(ctx, p, np, ns)
			if err == nil {
				break
			}
			if !apierrors.IsAlreadyExists(err) && !apierrors.IsConflict(err) || attempt == 3 {
				return nil, fmt.Errorf("claim namespace %s: %w", np.name, err)
			}
		}
	}
	return nil, nil
}

// claimOne writes np's verdict on ns (nil: absent): creates the Namespace
// claimed for p, or updates its claims and, when it is shared, its release
// map.
func (r *Reconciler) claimOne(ctx context.Context, p *v1alpha1.Package, np *nsPlan, ns *corev1.Namespace) error {
	v := np.verdict
	if ns == nil {
		ns = namespace(p.Name, np.name)
		claimMeta(ns, v.claims)
		return r.Client.Create(ctx, ns)
	}
	before := maps.Clone(ns.Annotations)
	claimMeta(ns, v.claims)
	if !np.storage {
		setSharedReleases(ns, p.Name, np.releases, v.claims)
	}
	if maps.Equal(before, ns.Annotations) {
		return nil
	}
	return r.Client.Update(ctx, ns)
}

// setSharedReleases sets names.AnnotationSharedReleases on ns when more
// than one Package claims it: the entries of the other claimants are
// kept, Package pkg's are releases; it is removed when only one does.
func setSharedReleases(ns *corev1.Namespace, pkg string, releases []string, claims []claim) {
	if len(claims) < 2 {
		delete(ns.Annotations, names.AnnotationSharedReleases)
		return
	}
	claimants := map[string]bool{}
	for _, c := range claims {
		claimants[c.Package] = true
	}
	var entries []string
	for _, e := range strings.Fields(ns.Annotations[names.AnnotationSharedReleases]) {
		if _, owner, ok := strings.Cut(e, "="); ok && owner != pkg && claimants[owner] {
			entries = append(entries, e)
		}
	}
	for _, rel := range releases {
		entries = append(entries, rel+"="+pkg)
	}
	slices.Sort(entries)
	ns.Annotations[names.AnnotationSharedReleases] = strings.Join(slices.Compact(entries), " ")
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

// plannedNamespaces returns the namespaces of ds's components and their
// release storage namespace, sorted.
func plannedNamespaces(ds []*desired) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.component.Namespace, d.identity.StorageRole.Namespace)
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
