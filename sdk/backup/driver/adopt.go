package driver

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// CreateOrAdopt creates obj with the label backups.cozystack.io/run=run
// added, or, when an object of that name exists, reads it into obj: with
// the same run label it is adopted (adopted=true, no error), otherwise it is
// a *ConflictError naming it (contract k7, "Idempotency"). c must read live
// (a cache filtered by label would not see the conflicting object). An
// error of the create other than AlreadyExists (e.g. a 409 Conflict or a
// timeout whose create did happen) is returned as is: the caller retries,
// and the retry's AlreadyExists adopts the object instead of failing.
func CreateOrAdopt(ctx context.Context, c client.Client, run types.UID, obj client.Object) (adopted bool, err error) {
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[v1alpha1.LabelRun] = string(run)
	obj.SetLabels(l)
	// Two rounds: the object may vanish between the AlreadyExists and the
	// read (deleted by a cancel or a person), then the create is retried.
	for range 2 {
		want := obj.DeepCopyObject().(client.Object)
		err := c.Create(ctx, obj)
		if err == nil {
			return false, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			restore(obj, want)
			return false, err
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(want), obj); err != nil {
			if apierrors.IsNotFound(err) {
				restore(obj, want)
				continue
			}
			return false, err
		}
		if found := obj.GetLabels()[v1alpha1.LabelRun]; found != string(run) {
			return false, &ConflictError{Object: describe(c, want), Run: string(run), Found: found}
		}
		return true, nil
	}
	return false, fmt.Errorf("create %s: it was deleted twice while being adopted; retrying", describe(c, obj))
}

// restore resets dst to src (both the same pointer-to-struct type): a
// failed Create or Get may have decoded a partial response into dst.
func restore(dst, src client.Object) {
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}

func describe(c client.Client, obj client.Object) string {
	kind := fmt.Sprintf("%T", obj)
	if gvk, err := apiutil.GVKForObject(obj, c.Scheme()); err == nil {
		kind = gvk.Kind
	}
	if obj.GetNamespace() == "" {
		return kind + " " + obj.GetName()
	}
	return fmt.Sprintf("%s %s/%s", kind, obj.GetNamespace(), obj.GetName())
}
