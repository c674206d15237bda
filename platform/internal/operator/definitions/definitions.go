// Package definitions installs what a catalog's artifact carries beside its
// charts: its ApplicationDefinitions and the ValidatingAdmissionPolicies
// (and bindings) shipped with them (contracts/artifact, "definitions
// layers"). The PackageSource reconciler calls Install for the revision it
// serves, so a catalog's kinds appear in the application API when its
// source is Ready, and only then: a catalog refused for its requirements
// installs no kind (BRIEF section 4).
//
// A catalog's AD names its chart by the catalog's name and the
// application's name (spec.release.source and .component, contract K1),
// while the cluster operator names the PackageSource: Rebind points the ADs
// that name their own catalog at the PackageSource that serves it, whose
// ExternalArtifacts carry the charts.
//
// Ownership follows the ExternalArtifacts' rule: an object carries the
// label cozystack.io/package-source (names.LabelValue of the source) and
// the annotation with the source's exact name; an object of the same name
// that another source, or a person, created is never overwritten (a
// *ConflictError, and nothing of the revision is applied). The objects get
// no owner reference: deleting a PackageSource leaves its kinds served, as
// it leaves installed Packages running, so tenants' applications never
// vanish from the API because a source was removed.
//
// That makes this the one place where the operator decides ownership by an
// annotation rather than a controller reference with the owner's UID (the
// rule of the Package's objects and the ExternalArtifacts): an owner
// reference would let the garbage collector delete the kinds with their
// source, and an annotated UID would turn re-creating a source into a
// Conflict on its own kinds. It holds because every kind here is
// cluster-scoped: only cluster administrators, and privileged components
// a Package was allowed to install with such clusterRules, can create or
// label one; tenants, whose rights end at their namespaces, cannot.
package definitions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/operator/names"
)

// FieldManager is the server-side apply field manager of the objects.
const FieldManager = "cozystack-operator"

// Kinds are the kinds a definitions layer may hold, in the order they are
// applied (an AD before the policy that matches its resource, a policy
// before its binding) and deleted in reverse.
var Kinds = []schema.GroupVersionKind{
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

// Install applies objs (cluster-scoped objects of Kinds, as
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
	for _, o := range ordered {
		obj := owned(o, source)
		if err := c.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			errs = append(errs, fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err))
			continue
		}
		res.Applied = append(res.Applied, o.GetKind()+" "+o.GetName())
	}

	// Prune what the source installed and no longer ships, bindings first.
	for i := len(Kinds) - 1; i >= 0; i-- {
		gvk := Kinds[i]
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
// PackageSource source's, or when a ValidatingAdmissionPolicy of objs
// matches a plural that someone else's ApplicationDefinition declares: a
// catalog's policy acts only on its own kinds, so a decoy definition with
// another catalog's plural (never served) brings no policy that denies
// that catalog's applications. It writes nothing; the PackageSource
// reconciler calls it before publishing a revision, so a refused revision
// publishes nothing either.
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
			owner := cur.GetAnnotations()[names.AnnotationPackageSource]
			if owner == "" {
				owner = "not installed by a PackageSource"
			} else {
				owner = "PackageSource " + owner
			}
			conflicts = append(conflicts, fmt.Sprintf("%s %s (%s)", o.GetKind(), o.GetName(), owner))
		}
	}
	foreign, err := foreignPlurals(ctx, c, source)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.GroupVersionKind() != Kinds[1] {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "matchConstraints", "resourceRules")
		for _, r := range rules {
			m, _ := r.(map[string]any)
			resources, _, _ := unstructured.NestedStringSlice(m, "resources")
			for _, res := range resources {
				plural, _, _ := strings.Cut(res, "/")
				if owner, ok := foreign[plural]; ok {
					conflicts = append(conflicts, fmt.Sprintf("ValidatingAdmissionPolicy %s (it matches %s, the kind of %s)", o.GetName(), plural, owner))
				}
			}
		}
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return &ConflictError{Objects: conflicts}
	}
	return nil
}

// foreignPlurals returns the plurals of the ApplicationDefinitions that are
// not PackageSource source's, each with its owner.
func foreignPlurals(ctx context.Context, c client.Client, source string) (map[string]string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(Kinds[0].GroupVersion().WithKind(Kinds[0].Kind + "List"))
	if err := c.List(ctx, list); err != nil {
		if apimeta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, err
	}
	out := map[string]string{}
	for _, ad := range list.Items {
		owner := ad.GetAnnotations()[names.AnnotationPackageSource]
		if owner == source {
			continue
		}
		plural, _, _ := unstructured.NestedString(ad.Object, "spec", "application", "plural")
		if owner == "" {
			out[plural] = "ApplicationDefinition " + ad.GetName() + ", not installed by a PackageSource"
		} else {
			out[plural] = "ApplicationDefinition " + ad.GetName() + " of PackageSource " + owner
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
		if o.GroupVersionKind() != Kinds[0] || catalog == source {
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
		if o.GroupVersionKind() != Kinds[0] {
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
	labels[names.LabelManagedBy] = names.ManagedBy
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
	for i, k := range Kinds {
		if k == gvk {
			return i
		}
	}
	return -1
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = k.Kind + " (" + k.GroupVersion().String() + ")"
	}
	return strings.Join(s, ", ")
}

func key(gvk schema.GroupVersionKind, name string) string { return gvk.String() + "/" + name }
