package adinstaller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/operator/names"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// InstalledKinds are the kinds a definitions layer may hold, in the order they are
// applied (an AD before the policy that matches its resource, a policy
// before its binding) and deleted in reverse.
var InstalledKinds = []schema.GroupVersionKind{
	{Group: "cozystack.io", Version: "v1alpha1", Kind: "ApplicationDefinition"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"},
	// Written by the operator from catalog.yaml (Roles), never read from
	// a definitions layer (artifact.CheckDefinitions refuses them there).
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
}

// ConflictError lists objects of the revision that exist and belong to
// someone other than the source.
type ConflictError struct {
	// Objects are "<Kind> <name> (owner)", sorted.
	Objects []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s already exist and belong to another owner: delete them, or remove them from this catalog; nothing of this revision's definitions was applied",
		strings.Join(e.Objects, ", "))
}

// Result is what Install did.
type Result struct {
	// Applied and Deleted count objects, by "<Kind> <name>".
	Applied, Deleted []string
}

// Install applies objs (cluster-scoped objects of InstalledKinds, as
// artifact.CheckDefinitions guarantees) for the PackageSource source and
// deletes the objects it installed earlier that objs no longer contains.
// Objects of another kind are refused before anything is written. When an
// object of the same kind and name exists and is not the source's, it
// returns a *ConflictError and writes nothing. Other errors are the API's,
// joined; the objects before the failing one stay applied (the next
// reconcile finishes the job).
func Install(ctx context.Context, c client.Client, source string, objs []*unstructured.Unstructured) (Result, error) {
	var res Result
	want := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if rank(o.GroupVersionKind()) < 0 {
			return res, fmt.Errorf("%s %s: not a kind the operator installs (only %s)", o.GetKind(), o.GetName(), kindList())
		}
		want[key(o.GroupVersionKind(), o.GetName())] = o
	}

	// The guard first, over all objects: a conflict applies nothing.
	if err := Guard(ctx, c, source, objs); err != nil {
		return res, err
	}

	ordered := append([]*unstructured.Unstructured(nil), objs...)
	sort.SliceStable(ordered, func(i, j int) bool {
		return rank(ordered[i].GroupVersionKind()) < rank(ordered[j].GroupVersionKind())
	})
	var errs []error
	// applied holds the owner reference of each applied definition (by
	// plural) and policy (by name): a policy is owned by the definitions
	// whose kinds it matches and a binding by its policy, so the garbage
	// collector removes a policy with the last kind it guards, however
	// that kind goes (K1 "Who serves a kind",
	// contracts/schemas/v1alpha1/k1-application.md).
	applied := map[string][]metav1.OwnerReference{}
	for _, o := range ordered {
		obj := owned(o, source)
		obj.SetOwnerReferences(ownersOf(obj, applied))
		if err := c.Patch(ctx, obj, client.Apply, client.FieldOwner(v1alpha1.FieldManagerOperator), client.ForceOwnership); err != nil {
			errs = append(errs, fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err))
			continue
		}
		ref := metav1.OwnerReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID()}
		switch obj.GroupVersionKind() {
		case InstalledKinds[0]:
			plural, _, _ := unstructured.NestedString(obj.Object, "spec", "application", "plural")
			applied["plural/"+plural] = append(applied["plural/"+plural], ref)
		case InstalledKinds[1]:
			applied["policy/"+obj.GetName()] = []metav1.OwnerReference{ref}
		}
		res.Applied = append(res.Applied, o.GetKind()+" "+o.GetName())
	}

	// Prune what the source installed and no longer ships, bindings first.
	for i := len(InstalledKinds) - 1; i >= 0; i-- {
		gvk := InstalledKinds[i]
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, list, client.MatchingLabels{names.LabelPackageSource: names.LabelValue(source)}); err != nil {
			if apimeta.IsNoMatchError(err) {
				continue // the API does not serve the kind: nothing of it to prune
			}
			errs = append(errs, fmt.Errorf("list %ss of PackageSource %s: %w", gvk.Kind, source, err))
			continue
		}
		for j := range list.Items {
			o := &list.Items[j]
			if _, ok := want[key(gvk, o.GetName())]; ok || o.GetAnnotations()[names.AnnotationPackageSource] != source {
				continue
			}
			if err := c.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("delete %s %s: %w", gvk.Kind, o.GetName(), err))
				continue
			}
			res.Deleted = append(res.Deleted, gvk.Kind+" "+o.GetName())
		}
	}
	return res, errors.Join(errs...)
}

// Guard returns a *ConflictError when an object of objs exists and is not
// PackageSource source's; when an ApplicationDefinition of objs claims a
// name another owner's ApplicationDefinition holds (its plural, singular,
// short names or kind, the names cozystack-api resolves); or when a
// ValidatingAdmissionPolicy of objs matches a plural someone else's
// ApplicationDefinition holds. A kind never moves between catalogs by
// creation order: it stays with the catalog whose definition holds it
// until that catalog stops shipping it (K1 "Who serves a kind",
// contracts/schemas/v1alpha1/k1-application.md), and a decoy
// definition with another catalog's plural brings neither a competing
// kind nor a policy that denies that catalog's applications. So does an
// ApplicationDefinition whose release prefix overlaps another owner's
// (prefixes.go). Guard writes
// nothing; the PackageSource reconciler calls it before publishing a
// revision, so a refused revision publishes nothing either.
func Guard(ctx context.Context, c client.Client, source string, objs []*unstructured.Unstructured) error {
	var conflicts []string
	for _, o := range objs {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(o.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKey{Name: o.GetName()}, cur)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return err
		case cur.GetAnnotations()[names.AnnotationPackageSource] != source:
			conflicts = append(conflicts, fmt.Sprintf("%s %s (%s)", o.GetKind(), o.GetName(), ownerOf(cur)))
		}
	}
	foreign, err := foreignClaims(ctx, c, source)
	if err != nil {
		return err
	}
	for _, o := range objs {
		switch o.GroupVersionKind() {
		case InstalledKinds[0]:
			for _, cl := range claims(o) {
				// A definition of the same name is a conflict already.
				if h, ok := foreign[cl]; ok && h.name != o.GetName() {
					conflicts = append(conflicts, fmt.Sprintf("ApplicationDefinition %s (its %s is held by %s)", o.GetName(), cl, h))
				}
			}
		case InstalledKinds[1]:
			for _, plural := range matchedPlurals(o) {
				if h, ok := foreign[resourceClaim(plural)]; ok {
					conflicts = append(conflicts, fmt.Sprintf("ValidatingAdmissionPolicy %s (it matches %s, the kind of %s)", o.GetName(), plural, h))
				}
			}
		}
	}
	prefixes, err := prefixConflicts(ctx, c, source, objs)
	if err != nil {
		return err
	}
	conflicts = append(conflicts, prefixes...)
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return &ConflictError{Objects: slices.Compact(conflicts)}
	}
	return nil
}

// matchedPlurals are the resources (without subresource) a
// ValidatingAdmissionPolicy's resourceRules match, in order.
func matchedPlurals(policy *unstructured.Unstructured) []string {
	var out []string
	rules, _, _ := unstructured.NestedSlice(policy.Object, "spec", "matchConstraints", "resourceRules")
	for _, r := range rules {
		m, _ := r.(map[string]any)
		resources, _, _ := unstructured.NestedStringSlice(m, "resources")
		for _, res := range resources {
			plural, _, _ := strings.Cut(res, "/")
			out = append(out, plural)
		}
	}
	return out
}

// ownerOf describes who installed cur, by its annotation.
func ownerOf(cur *unstructured.Unstructured) string {
	if owner := cur.GetAnnotations()[names.AnnotationPackageSource]; owner != "" {
		return "PackageSource " + owner
	}
	return "not installed by a PackageSource"
}

// claims are the names an ApplicationDefinition claims, in cozystack-api's
// two name spaces (platform/internal/apiserver/appkinds, Resolve): resource
// names (plural, singular, short names) and the kind, lower-cased.
func claims(ad *unstructured.Unstructured) []string {
	app, _, _ := unstructured.NestedMap(ad.Object, "spec", "application")
	var out []string
	for _, f := range []string{"plural", "singular"} {
		if n, _ := app[f].(string); n != "" {
			out = append(out, resourceClaim(n))
		}
	}
	short, _, _ := unstructured.NestedStringSlice(app, "shortNames")
	for _, n := range short {
		out = append(out, resourceClaim(n))
	}
	if kind, _ := app["kind"].(string); kind != "" {
		out = append(out, "kind "+strings.ToLower(kind))
	}
	return out
}

func resourceClaim(name string) string { return fmt.Sprintf("resource name %q", name) }

// holder is the ApplicationDefinition holding a name, and its owner.
type holder struct{ name, owner string }

func (h holder) String() string {
	if h.owner == "" {
		return "ApplicationDefinition " + h.name + ", not installed by a PackageSource"
	}
	return "ApplicationDefinition " + h.name + " of PackageSource " + h.owner
}

// foreignClaims maps every name (claims) an ApplicationDefinition that is
// not PackageSource source's claims to that definition.
func foreignClaims(ctx context.Context, c client.Client, source string) (map[string]holder, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(InstalledKinds[0].GroupVersion().WithKind(InstalledKinds[0].Kind + "List"))
	if err := c.List(ctx, list); err != nil {
		if apimeta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, err
	}
	out := map[string]holder{}
	for i := range list.Items {
		ad := &list.Items[i]
		owner := ad.GetAnnotations()[names.AnnotationPackageSource]
		if owner == source {
			continue
		}
		for _, cl := range claims(ad) {
			out[cl] = holder{ad.GetName(), owner}
		}
	}
	return out, nil
}

// Rebind returns objs with every ApplicationDefinition whose
// spec.release.source is catalog (the catalog's own name) pointed at the
// PackageSource source instead; other objects, and ADs naming another
// source or a chartRef, are returned as they are. objs is not modified.
func Rebind(objs []*unstructured.Unstructured, catalog, source string) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o
		if o.GroupVersionKind() != InstalledKinds[0] || catalog == source {
			continue
		}
		if s, _, _ := unstructured.NestedString(o.Object, "spec", "release", "source"); s == catalog {
			cp := o.DeepCopy()
			_ = unstructured.SetNestedField(cp.Object, source, "spec", "release", "source")
			out[i] = cp
		}
	}
	return out
}

// CheckBound checks, after Rebind, that every ApplicationDefinition of objs
// installs a chart of PackageSource source itself: release.source is
// source, release.component one of applications (the catalog's
// applications[].name), and there is no chartRef. artifact.CheckDefinitions
// refuses anything else at build and pull; this is the operator's own
// check, so an artifact that slipped past them still never binds a kind to
// another catalog's chart or to a component's. The error names every AD
// that fails.
func CheckBound(objs []*unstructured.Unstructured, source string, applications []string) error {
	var errs []error
	for _, o := range objs {
		if o.GroupVersionKind() != InstalledKinds[0] {
			continue
		}
		src, _, _ := unstructured.NestedString(o.Object, "spec", "release", "source")
		comp, _, _ := unstructured.NestedString(o.Object, "spec", "release", "component")
		_, hasRef, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "release", "chartRef")
		switch {
		case hasRef:
			errs = append(errs, fmt.Errorf("ApplicationDefinition %s: spec.release.chartRef: a catalog's kind installs only the catalog's own application charts, named by source and component", o.GetName()))
		case src != source:
			errs = append(errs, fmt.Errorf("ApplicationDefinition %s: spec.release.source %q: a catalog's kind installs only the catalog's own application charts (this catalog's)", o.GetName(), src))
		case !slices.Contains(applications, comp):
			errs = append(errs, fmt.Errorf("ApplicationDefinition %s: spec.release.component %q is not an application of the catalog (%s)", o.GetName(), comp, strings.Join(applications, ", ")))
		}
	}
	return errors.Join(errs...)
}

// ownersOf returns the owner references of obj among applied (see
// Install): for a policy, the definitions serving the plurals it matches;
// for a binding, its policy; nil for anything else.
func ownersOf(obj *unstructured.Unstructured, applied map[string][]metav1.OwnerReference) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	switch obj.GroupVersionKind() {
	case InstalledKinds[1]:
		for _, plural := range matchedPlurals(obj) {
			for _, ref := range applied["plural/"+plural] {
				if !slices.ContainsFunc(out, func(o metav1.OwnerReference) bool { return o.UID == ref.UID }) {
					out = append(out, ref)
				}
			}
		}
	case InstalledKinds[2]:
		policy, _, _ := unstructured.NestedString(obj.Object, "spec", "policyName")
		out = applied["policy/"+policy]
	}
	return out
}

// owned returns a copy of o labelled and annotated as source's, without
// the fields server-side apply refuses.
func owned(o *unstructured.Unstructured, source string) *unstructured.Unstructured {
	obj := o.DeepCopy()
	unstructured.RemoveNestedField(obj.Object, "status")
	obj.SetResourceVersion("")
	obj.SetUID("")
	obj.SetManagedFields(nil)
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[v1alpha1.LabelManagedBy] = v1alpha1.ManagedByOperator
	labels[names.LabelPackageSource] = names.LabelValue(source)
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[names.AnnotationPackageSource] = source
	obj.SetAnnotations(annotations)
	return obj
}

func rank(gvk schema.GroupVersionKind) int {
	for i, k := range InstalledKinds {
		if k == gvk {
			return i
		}
	}
	return -1
}

func kindList() string {
	s := make([]string, len(InstalledKinds))
	for i, k := range InstalledKinds {
		s[i] = k.Kind + " (" + k.GroupVersion().String() + ")"
	}
	return strings.Join(s, ", ")
}

func key(gvk schema.GroupVersionKind, name string) string { return gvk.String() + "/" + name }
