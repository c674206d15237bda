package adinstaller

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
)

// ErrSourceGone is returned by InstallForSource when the PackageSource
// was deleted (or replaced by one of the same name) while the install
// ran: what the install created is withdrawn again.
var ErrSourceGone = errors.New("the PackageSource was deleted while its definitions were installed")

// InstallForSource is Install for ps as a reconcile read it, maybe from a
// cache that has not yet seen its deletion. live reads past that cache.
//
// A deleted source keeps the kinds it installed (doc.go), but it gets no
// new ones: an object this install created (absent, by UID, from a live
// list taken before it) is deleted again when a live read after it finds
// ps gone, deleting or re-created with another UID, and the error is
// ErrSourceGone, joined with Install's. So a definition a person deleted
// after deleting its source is not re-created by a pass that started
// before, and the source's grants then go with its last definition
// (RemoveGrants). Objects that existed before the install are left as
// Install left them. The live reads cost one list per kind and one get.
func InstallForSource(ctx context.Context, c client.Client, live client.Reader, ps *v1alpha1.PackageSource, objs []*unstructured.Unstructured) (Result, error) {
	before, err := installedUIDs(ctx, live, ps.Name)
	if err != nil {
		return Result{}, err
	}
	res, installErr := Install(ctx, c, ps.Name, objs)
	gone, err := sourceGone(ctx, live, ps)
	if err != nil || !gone {
		return res, errors.Join(installErr, err)
	}
	withdrawn, err := withdrawNew(ctx, c, live, ps.Name, before)
	res.Deleted = append(res.Deleted, withdrawn...)
	return res, errors.Join(installErr, err, ErrSourceGone)
}

// sourceGone reads ps past the cache: true when it no longer exists, is
// being deleted, or has another UID (deleted and created again).
func sourceGone(ctx context.Context, live client.Reader, ps *v1alpha1.PackageSource) (bool, error) {
	var now v1alpha1.PackageSource
	switch err := live.Get(ctx, client.ObjectKeyFromObject(ps), &now); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("read PackageSource %s: %w", ps.Name, err)
	}
	return now.UID != ps.UID || !now.DeletionTimestamp.IsZero(), nil
}

// installedUIDs lists, live, the objects of InstalledKinds that source
// installed (its label and exact annotation, Install's rule), by key.
func installedUIDs(ctx context.Context, live client.Reader, source string) (map[string]types.UID, error) {
	out := map[string]types.UID{}
	err := eachInstalled(ctx, live, source, func(o *unstructured.Unstructured) error {
		out[key(o.GroupVersionKind(), o.GetName())] = o.GetUID()
		return nil
	})
	return out, err
}

// withdrawNew deletes, with a UID precondition, the objects source
// installed that before does not hold by the same UID.
func withdrawNew(ctx context.Context, c client.Client, live client.Reader, source string, before map[string]types.UID) ([]string, error) {
	var withdrawn []string
	var errs []error
	err := eachInstalled(ctx, live, source, func(o *unstructured.Unstructured) error {
		if uid, ok := before[key(o.GroupVersionKind(), o.GetName())]; ok && uid == o.GetUID() {
			return nil
		}
		uid := o.GetUID()
		if err := c.Delete(ctx, o, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("withdraw %s %s: %w", o.GetKind(), o.GetName(), err))
			return nil
		}
		withdrawn = append(withdrawn, o.GetKind()+" "+o.GetName())
		return nil
	})
	return withdrawn, errors.Join(append(errs, err)...)
}

// eachInstalled calls fn for every object of InstalledKinds that source
// installed, read through r.
func eachInstalled(ctx context.Context, r client.Reader, source string, fn func(*unstructured.Unstructured) error) error {
	for _, gvk := range InstalledKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.List(ctx, list, client.MatchingLabels{names.LabelPackageSource: names.LabelValue(source)}); err != nil {
			if apimeta.IsNoMatchError(err) {
				continue
			}
			return fmt.Errorf("list %ss of PackageSource %s: %w", gvk.Kind, source, err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			if o.GetAnnotations()[names.AnnotationPackageSource] != source {
				continue
			}
			o.SetGroupVersionKind(gvk)
			if err := fn(o); err != nil {
				return err
			}
		}
	}
	return nil
}
