package packagereconciler

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/runtime/patch"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/status"
)

// finalize removes a deleted Package's objects, HelmReleases first, and
// then its finalizer.
func (r *Reconciler) finalize(ctx context.Context, p *v1alpha1.Package) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(p, Finalizer) {
		return ctrl.Result{}, nil
	}
	left, holding, err := r.prune(ctx, p, namespacesOf(p, nil), nil)
	if err != nil {
		return ctrl.Result{}, err
	}
	if left > 0 {
		patcher := patch.NewSerialPatcher(p, r.Client)
		p.Status.Namespaces = holding
		res := status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonInstalling,
			Message: fmt.Sprintf("uninstalling: %d objects left (HelmReleases first, then their identities)", left)}
		if err := r.writeStatus(ctx, patcher, p, res); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: waitInterval}, nil
	}
	// Its releases are gone: so goes its CRD policy.
	if err := r.dropCRDPolicy(ctx, p); err != nil {
		return ctrl.Result{}, err
	}
	base := client.MergeFrom(p.DeepCopy())
	controllerutil.RemoveFinalizer(p, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, p, base))
}

// sweep releases the identities left by a Package named name that no
// longer exists (except, the UID of the one that does now, if any): when a
// Package goes without its finalizer, the garbage collector deletes its
// HelmReleases and identities together, and IdentityFinalizer holds each
// identity until no release of its component is left. Its status (the
// namespaces) is gone with it, so this reads the cache cluster-wide; it
// only ever removes IdentityFinalizer from an object already being
// deleted, so a labelled object of someone else's loses nothing.
func (r *Reconciler) sweep(ctx context.Context, name string, except types.UID) error {
	sel := client.MatchingLabels{v1alpha1.LabelManagedBy: v1alpha1.ManagedByOperator, names.LabelPackage: names.LabelValue(name)}
	byOwner := map[types.UID][]client.Object{}
	for _, l := range append(namespacedLists(), clusterLists()...) {
		if err := r.Client.List(ctx, l, sel); err != nil {
			return err
		}
		items, err := metaItems(l)
		if err != nil {
			return err
		}
		for _, o := range items {
			if ref := metav1.GetControllerOfNoCopy(o); ref != nil && isPackageRef(*ref) && ref.Name == name && ref.UID != except {
				byOwner[ref.UID] = append(byOwner[ref.UID], o)
			}
		}
	}
	for _, objs := range byOwner {
		inv := newInventory(name, objs)
		for _, o := range objs {
			if err := r.unblock(ctx, inv, o); err != nil {
				return err
			}
		}
	}
	return nil
}
