package application

import (
	"context"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Delete deletes application name's HelmRelease, passing preconditions (the
// application's UID and resourceVersion are the HelmRelease's), propagation
// policy, grace period and dryRun through. It returns the application and
// deleted=true when the HelmRelease is gone at once, or the application
// marked for deletion and deleted=false while finalizers hold it, as the
// generic registry does.
func (r *REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	if options == nil {
		options = &metav1.DeleteOptions{}
	}
	current, err := r.getHelmRelease(ctx, name, nil)
	if err != nil {
		return nil, false, err
	}
	app, err := r.fromHelmRelease(current)
	if err != nil {
		return nil, false, err
	}
	if deleteValidation != nil {
		if err := deleteValidation(ctx, app.DeepCopyObject()); err != nil {
			return nil, false, err
		}
	}
	del := &client.DeleteOptions{
		GracePeriodSeconds: options.GracePeriodSeconds,
		Preconditions:      options.Preconditions,
		PropagationPolicy:  options.PropagationPolicy,
		DryRun:             options.DryRun,
		Raw:                options.DeepCopy(),
	}
	if err := r.client.Delete(ctx, current, del); err != nil {
		return nil, false, r.mapError(err, name)
	}
	if len(options.DryRun) > 0 {
		return app, deletesAtOnce(current, options), nil
	}
	// The client drops the DELETE response; read again to tell "gone" from
	// "marked for deletion".
	after := &helmv2.HelmRelease{}
	err = r.client.Get(ctx, r.key(ctx, name), after)
	switch {
	case apierrors.IsNotFound(err), err == nil && after.UID != current.UID:
		return app, true, nil
	case err != nil:
		// The delete succeeded; only its outcome is unknown.
		klog.V(2).InfoS("Reading HelmRelease after delete", "kind", r.kind.Kind, "name", name, "err", err)
		return app, false, nil
	}
	if !r.owns(after) {
		return app, true, nil
	}
	out, err := r.fromHelmRelease(after)
	if err != nil {
		return nil, false, err
	}
	return out, false, nil
}

// deletesAtOnce predicts a dry-run delete's outcome: the object stays while
// it has finalizers, and orphan or foreground propagation add one.
func deletesAtOnce(hr *helmv2.HelmRelease, options *metav1.DeleteOptions) bool {
	if len(hr.Finalizers) > 0 {
		return false
	}
	if p := options.PropagationPolicy; p != nil && (*p == metav1.DeletePropagationOrphan || *p == metav1.DeletePropagationForeground) {
		return false
	}
	//nolint:staticcheck // OrphanDependents is deprecated but still honoured by kube-apiserver.
	return options.OrphanDependents == nil || !*options.OrphanDependents
}

// DeleteCollection deletes every application listOptions select (all pages)
// one by one with Delete; ones already gone are skipped. It returns the
// deleted applications as a <Kind>List. Not atomic, as in the generic
// registry.
func (r *REST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	lo := &metainternalversion.ListOptions{}
	if listOptions != nil {
		lo = listOptions.DeepCopy()
	}
	lo.Limit, lo.Continue = 0, ""
	listed, err := r.List(ctx, lo)
	if err != nil {
		return nil, err
	}
	var items []*unstructured.Unstructured
	if err := meta.EachListItem(listed, func(o runtime.Object) error {
		items = append(items, o.(*unstructured.Unstructured))
		return nil
	}); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out := r.NewList().(*unstructured.UnstructuredList)
	for _, item := range items {
		var opts *metav1.DeleteOptions
		if options != nil {
			opts = options.DeepCopy()
		}
		obj, _, err := r.Delete(genericapirequest.WithNamespace(ctx, item.GetNamespace()), item.GetName(), deleteValidation, opts)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *obj.(*unstructured.Unstructured))
	}
	return out, nil
}
