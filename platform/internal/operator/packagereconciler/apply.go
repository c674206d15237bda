package packagereconciler

import (
	"context"
	"fmt"
	"maps"
	"slices"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
)

// kindOf names obj's kind for messages.
func (r *Reconciler) kindOf(obj client.Object) string {
	gvk, err := apiutil.GVKForObject(obj, r.Client.Scheme())
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return gvk.Kind
}

func describe(kind string, obj client.Object) string {
	if obj.GetNamespace() == "" {
		return kind + " " + obj.GetName()
	}
	return kind + " " + obj.GetNamespace() + "/" + obj.GetName()
}

// get reads obj's current state: from the cache, which holds only objects
// the operator labelled, and, when absent there, from the API, so that an
// object someone else created under the same name is seen too.
func (r *Reconciler) get(ctx context.Context, obj client.Object) (client.Object, error) {
	cur := obj.DeepCopyObject().(client.Object)
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), cur)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), cur)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return cur, err
}

// guard returns the objects of ds that exist and are not Package p's
// (controlledBy), with their owners (see conflictMessage); none when p may
// write all of them. It runs before anything is written, so a conflict leaves
// nothing half created and a HelmRelease another Package owns is never
// overwritten (docs/operator/catalogs.md, "Catalog delivery", "Refusals leave nothing
// behind" and "Ownership"), and an object someone labelled or annotated
// as p's is never adopted.
func (r *Reconciler) guard(ctx context.Context, p *v1alpha1.Package, ds []*desired) ([]conflict, error) {
	var conflicts []conflict
	for _, d := range ds {
		for _, obj := range d.objects() {
			cur, err := r.get(ctx, obj)
			if err != nil {
				return nil, err
			}
			if cur == nil || controlledBy(cur, p) {
				continue
			}
			conflicts = append(conflicts, newConflict(r.kindOf(obj), cur, d.component.Name, p))
		}
	}
	return conflicts, nil
}

// isTenant reports whether namespace name carries the K2 tenant label.
func (r *Reconciler) isTenant(ctx context.Context, name string) (bool, error) {
	var ns corev1.Namespace
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &ns); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	_, ok := ns.Labels[v1alpha1.LabelTenant]
	return ok, nil
}

// apply creates want, or updates the existing object where it differs,
// keeping what others set on it (helm-controller's finalizer and status,
// extra labels and annotations). An existing object is updated only if
// owner controls it: guard checked that, and it is checked again here, so
// an object replaced in between is never adopted.
func (r *Reconciler) apply(ctx context.Context, owner *v1alpha1.Package, want client.Object) error {
	cur, err := r.get(ctx, want)
	if err != nil {
		return err
	}
	what := describe(r.kindOf(want), want)
	if cur == nil {
		if err := r.Client.Create(ctx, want); err != nil {
			return fmt.Errorf("create %s: %w", what, err)
		}
		return nil
	}
	if !controlledBy(cur, owner) {
		return fmt.Errorf("%s changed hands since it was checked: it belongs to %s; it is not overwritten", what, describeOwner(cur, owner))
	}
	if !mutate(cur, want) {
		return nil
	}
	if err := r.Client.Update(ctx, cur); err != nil {
		return fmt.Errorf("update %s: %w", what, err)
	}
	return nil
}

// mutate copies want's labels, annotations, finalizers and content into
// cur (which the same Package controls already) and reports whether
// anything changed.
func mutate(cur, want client.Object) bool {
	changed := false
	merge := func(have, add map[string]string) map[string]string {
		if have == nil {
			have = map[string]string{}
		}
		for k, v := range add {
			if have[k] != v {
				have[k] = v
				changed = true
			}
		}
		return have
	}
	cur.SetLabels(merge(cur.GetLabels(), want.GetLabels()))
	cur.SetAnnotations(merge(cur.GetAnnotations(), want.GetAnnotations()))
	// A finalizer cannot be added to an object being deleted.
	if cur.GetDeletionTimestamp().IsZero() {
		for _, f := range want.GetFinalizers() {
			if !slices.Contains(cur.GetFinalizers(), f) {
				cur.SetFinalizers(append(cur.GetFinalizers(), f))
				changed = true
			}
		}
	}
	set := func(dst, src any) {
		if !apiequality.Semantic.DeepEqual(dst, src) {
			changed = true
		}
	}
	switch w := want.(type) {
	case *corev1.ServiceAccount:
	case *rbacv1.Role:
		c := cur.(*rbacv1.Role)
		set(c.Rules, w.Rules)
		c.Rules = w.Rules
	case *rbacv1.RoleBinding:
		c := cur.(*rbacv1.RoleBinding)
		set(c.Subjects, w.Subjects)
		c.Subjects = w.Subjects
	case *rbacv1.ClusterRole:
		c := cur.(*rbacv1.ClusterRole)
		set(c.Rules, w.Rules)
		c.Rules = w.Rules
	case *rbacv1.ClusterRoleBinding:
		c := cur.(*rbacv1.ClusterRoleBinding)
		set(c.Subjects, w.Subjects)
		c.Subjects = w.Subjects
	case *corev1.ConfigMap:
		c := cur.(*corev1.ConfigMap)
		set(c.Data, w.Data)
		c.Data = w.Data
	case *helmv2.HelmRelease:
		c := cur.(*helmv2.HelmRelease)
		set(c.Spec, w.Spec)
		c.Spec = w.Spec
	}
	return changed
}

// namespacedLists and clusterLists are the kinds of objects a Package
// writes.
func namespacedLists() []client.ObjectList {
	return []client.ObjectList{&helmv2.HelmReleaseList{}, &corev1.ConfigMapList{}, &corev1.ServiceAccountList{},
		&rbacv1.RoleList{}, &rbacv1.RoleBindingList{}}
}

func clusterLists() []client.ObjectList {
	return []client.ObjectList{&rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{}}
}

// owned lists every object Package p controls (controlledBy) in namespaces,
// and its cluster-scoped objects, by kind. The labels only narrow the
// listing (from the cache, which holds labelled objects only); objects
// that carry them without p's controller reference are never returned, so
// never pruned, suspended or adopted.
func (r *Reconciler) owned(ctx context.Context, p *v1alpha1.Package, namespaces []string) ([]client.Object, error) {
	sel := client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByOperator, names.LabelPackage: names.LabelValue(p.Name)}
	var out []client.Object
	add := func(l client.ObjectList, opts ...client.ListOption) error {
		if err := r.Client.List(ctx, l, append(opts, sel)...); err != nil {
			return err
		}
		items, err := metaItems(l)
		if err != nil {
			return err
		}
		for _, o := range items {
			if controlledBy(o, p) {
				out = append(out, o)
			}
		}
		return nil
	}
	for _, ns := range namespaces {
		for _, l := range namespacedLists() {
			if err := add(l, client.InNamespace(ns)); err != nil {
				return nil, err
			}
		}
	}
	for _, l := range clusterLists() {
		if err := add(l); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// key identifies an object across kinds.
type key struct{ kind, namespace, name string }

func (r *Reconciler) keyOf(obj client.Object) key {
	return key{r.kindOf(obj), obj.GetNamespace(), obj.GetName()}
}

// inventory is a listing of one Package's objects (all controlled by it),
// with its HelmReleases indexed, to tell which identity a HelmRelease still
// needs.
type inventory struct {
	pkg  string
	objs []client.Object
	// releases are the HelmReleases; components are the components that
	// have one.
	releases   map[key]*helmv2.HelmRelease
	components map[string]bool
}

func newInventory(pkg string, objs []client.Object) *inventory {
	inv := &inventory{pkg: pkg, objs: objs, releases: map[key]*helmv2.HelmRelease{}, components: map[string]bool{}}
	for _, o := range objs {
		if hr, ok := o.(*helmv2.HelmRelease); ok {
			inv.releases[key{"HelmRelease", hr.Namespace, hr.Name}] = hr
			inv.components[hr.Labels[names.LabelComponent]] = true
		}
	}
	return inv
}

// release returns the HelmRelease o (an identity or catalog values object)
// serves, or nil when it is gone: the component's release in o's
// namespace, or for a cluster-scoped o or one in the release storage
// namespace (names.StorageNamespace), any release of the component.
func (inv *inventory) release(o client.Object) *helmv2.HelmRelease {
	comp := o.GetLabels()[names.LabelComponent]
	if ns := o.GetNamespace(); ns != "" && ns != names.StorageNamespace(inv.pkg) {
		return inv.releases[key{"HelmRelease", o.GetNamespace(), names.HelmRelease(inv.pkg, comp)}]
	}
	for _, hr := range inv.releases {
		if hr.Labels[names.LabelComponent] == comp {
			return hr
		}
	}
	return nil
}

// unblock removes IdentityFinalizer from o if o is being deleted and no
// HelmRelease it serves is left (the HelmRelease was uninstalled, or never
// existed).
func (r *Reconciler) unblock(ctx context.Context, inv *inventory, o client.Object) error {
	if o.GetDeletionTimestamp().IsZero() || !controllerutil.ContainsFinalizer(o, IdentityFinalizer) || inv.release(o) != nil {
		return nil
	}
	return r.dropFinalizer(ctx, o)
}

func (r *Reconciler) dropFinalizer(ctx context.Context, o client.Object) error {
	if !controllerutil.ContainsFinalizer(o, IdentityFinalizer) {
		return nil
	}
	patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
	controllerutil.RemoveFinalizer(o, IdentityFinalizer)
	if err := r.Client.Patch(ctx, o, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove finalizer %s from %s: %w", IdentityFinalizer, describe(r.kindOf(o), o), err)
	}
	return nil
}

// unblockAll releases every identity of Package p in namespaces that is
// being deleted and whose HelmRelease is gone (deleted with its namespace,
// say), so it can go, before anything is written: its namespace may be
// terminating, and the next reconcile recreates it.
func (r *Reconciler) unblockAll(ctx context.Context, p *v1alpha1.Package, namespaces []string) error {
	objs, err := r.owned(ctx, p, namespaces)
	if err != nil {
		return err
	}
	inv := newInventory(p.Name, objs)
	for _, o := range objs {
		if err := r.unblock(ctx, inv, o); err != nil {
			return err
		}
	}
	return nil
}

// prune deletes the objects of Package p in namespaces (and its
// cluster-scoped ones) that are not in want, in an order that lets
// helm-controller uninstall: a HelmRelease first; the ServiceAccount, Role
// and RoleBinding it is impersonated through (and the catalog values) only
// once it is gone; a ClusterRole and its binding only once no HelmRelease
// of that component is being removed. It returns how many of p's objects
// remain outside want, and the namespaces holding them.
func (r *Reconciler) prune(ctx context.Context, p *v1alpha1.Package, namespaces []string, want map[key]bool) (int, []string, error) {
	objs, err := r.owned(ctx, p, namespaces)
	if err != nil {
		return 0, nil, err
	}
	inv := newInventory(p.Name, objs)
	leaving := map[string]bool{} // components with a HelmRelease being removed
	for k, hr := range inv.releases {
		if !want[k] {
			leaving[hr.Labels[names.LabelComponent]] = true
		}
	}
	remaining := 0
	holding := map[string]bool{}
	for _, o := range objs {
		k := r.keyOf(o)
		if want[k] {
			if err := r.unblock(ctx, inv, o); err != nil {
				return remaining, nil, err
			}
			continue
		}
		remaining++
		if o.GetNamespace() != "" {
			holding[o.GetNamespace()] = true
		}
		comp := o.GetLabels()[names.LabelComponent]
		switch o := o.(type) {
		case *helmv2.HelmRelease:
			if !o.DeletionTimestamp.IsZero() {
				continue
			}
			if o.Spec.Suspend {
				// helm-controller skips the uninstall of a suspended release.
				patch := client.MergeFrom(o.DeepCopy())
				o.Spec.Suspend = false
				if err := r.Client.Patch(ctx, o, patch); err != nil {
					return remaining, nil, err
				}
			}
		case *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding:
			if leaving[comp] {
				continue
			}
			if err := r.dropFinalizer(ctx, o); err != nil {
				return remaining, nil, err
			}
		default:
			if hr := inv.release(o); hr != nil && !want[key{"HelmRelease", hr.Namespace, hr.Name}] {
				continue // its release is being uninstalled through it
			}
			if err := r.dropFinalizer(ctx, o); err != nil {
				return remaining, nil, err
			}
		}
		if err := r.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			return remaining, nil, fmt.Errorf("delete %s: %w", describe(k.kind, o), err)
		}
	}
	return remaining, slices.Sorted(maps.Keys(holding)), nil
}

func metaItems(l client.ObjectList) ([]client.Object, error) {
	switch l := l.(type) {
	case *helmv2.HelmReleaseList:
		return ptrs(l.Items), nil
	case *corev1.ConfigMapList:
		return ptrs(l.Items), nil
	case *corev1.ServiceAccountList:
		return ptrs(l.Items), nil
	case *rbacv1.RoleList:
		return ptrs(l.Items), nil
	case *rbacv1.RoleBindingList:
		return ptrs(l.Items), nil
	case *rbacv1.ClusterRoleList:
		return ptrs(l.Items), nil
	case *rbacv1.ClusterRoleBindingList:
		return ptrs(l.Items), nil
	}
	return nil, fmt.Errorf("unexpected list %T", l)
}

// ptrs returns pointers to the items of a typed list, as client.Objects.
func ptrs[T any, P interface {
	*T
	client.Object
}](items []T) []client.Object {
	out := make([]client.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}
