package pkg

import (
	"context"
	"fmt"
	"slices"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// guard returns a Conflict message naming the owner of every object of ds
// that exists and belongs to another Package or to none, or "" when the
// Package may write all of them. It runs before anything is written, so a
// conflict leaves nothing half created (issue 5, "Guards": never overwrite
// a HelmRelease another Package owns).
func (r *Reconciler) guard(ctx context.Context, pkg string, ds []*desired) (string, error) {
	var conflicts []string
	for _, d := range ds {
		for _, obj := range d.objects() {
			cur, err := r.get(ctx, obj)
			if err != nil {
				return "", err
			}
			if cur == nil || ownedBy(cur) == pkg {
				continue
			}
			owner := "no Package (it was created by something else)"
			if o := ownedBy(cur); o != "" {
				owner = fmt.Sprintf("Package %q", o)
			}
			conflicts = append(conflicts, fmt.Sprintf("%s (component %s) exists and belongs to %s",
				describe(r.kindOf(obj), obj), d.component.Name, owner))
		}
	}
	if len(conflicts) == 0 {
		return "", nil
	}
	return strings.Join(conflicts, "; ") + ": it is never overwritten; delete or rename it, or uninstall its owner; nothing was installed", nil
}

// ensureNamespace creates namespace name unless it exists.
func (r *Reconciler) ensureNamespace(ctx context.Context, pkg, name string) error {
	var ns corev1.Namespace
	err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &ns)
	if apierrors.IsNotFound(err) {
		err = r.Client.Create(ctx, namespace(pkg, name))
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
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

// apply creates want, or updates the existing object (already checked by
// guard) where it differs, keeping what others set on it (helm-controller's
// finalizer and status, extra labels and annotations).
func (r *Reconciler) apply(ctx context.Context, owner *v1alpha1.Package, want client.Object) error {
	if _, ok := want.(*helmv2.HelmRelease); ok {
		// HelmReleases go with their Package even if its finalizer is
		// bypassed; identities do not (see cleanup).
		if err := controllerutil.SetControllerReference(owner, want, r.Client.Scheme()); err != nil {
			return err
		}
	}
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
	if !mutate(cur, want) {
		return nil
	}
	if err := r.Client.Update(ctx, cur); err != nil {
		return fmt.Errorf("update %s: %w", what, err)
	}
	return nil
}

// mutate copies want's labels, annotations, owner references and content
// into cur and reports whether anything changed.
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
	for _, ref := range want.GetOwnerReferences() {
		if !slices.ContainsFunc(cur.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.UID == ref.UID }) {
			cur.SetOwnerReferences(append(cur.GetOwnerReferences(), ref))
			changed = true
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

// owned lists every object of Package pkg the operator created, by kind.
func (r *Reconciler) owned(ctx context.Context, pkg string) ([]client.Object, error) {
	sel := client.MatchingLabels{names.LabelManagedBy: names.ManagedBy, names.LabelPackage: names.LabelValue(pkg)}
	lists := []client.ObjectList{
		&helmv2.HelmReleaseList{}, &corev1.ConfigMapList{}, &corev1.ServiceAccountList{},
		&rbacv1.RoleList{}, &rbacv1.RoleBindingList{}, &rbacv1.ClusterRoleList{}, &rbacv1.ClusterRoleBindingList{},
	}
	var out []client.Object
	for _, l := range lists {
		if err := r.Client.List(ctx, l, sel); err != nil {
			return nil, err
		}
		items, err := metaItems(l)
		if err != nil {
			return nil, err
		}
		for _, o := range items {
			if ownedBy(o) == pkg {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// key identifies an object across kinds.
type key struct{ kind, namespace, name string }

func (r *Reconciler) keyOf(obj client.Object) key {
	return key{r.kindOf(obj), obj.GetNamespace(), obj.GetName()}
}

// prune deletes the objects of Package pkg that are not in want, in an
// order that lets helm-controller uninstall: a HelmRelease first; the
// ServiceAccount, Role and RoleBinding it is impersonated through (and the
// catalog values) only once it is gone; a ClusterRole and its binding
// only once no HelmRelease of that component is left to uninstall. It
// returns how many owned objects remain outside want.
func (r *Reconciler) prune(ctx context.Context, pkg string, want map[key]bool) (int, error) {
	objs, err := r.owned(ctx, pkg)
	if err != nil {
		return 0, err
	}
	releases := map[key]bool{}   // every owned HelmRelease, leaving or not
	leaving := map[string]bool{} // components with a HelmRelease being removed
	for _, o := range objs {
		if hr, ok := o.(*helmv2.HelmRelease); ok {
			releases[key{"HelmRelease", hr.Namespace, hr.Name}] = true
			if !want[r.keyOf(hr)] {
				leaving[hr.Labels[names.LabelComponent]] = true
			}
		}
	}
	remaining := 0
	for _, o := range objs {
		k := r.keyOf(o)
		if want[k] {
			continue
		}
		remaining++
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
					return remaining, err
				}
			}
		case *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding:
			if leaving[comp] {
				continue
			}
		default:
			if releases[key{"HelmRelease", o.GetNamespace(), names.HelmRelease(pkg, comp)}] {
				continue
			}
		}
		if err := r.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			return remaining, fmt.Errorf("delete %s: %w", describe(k.kind, o), err)
		}
	}
	return remaining, nil
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
