package application

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// List returns the applications of the kind in the request namespace (all
// namespaces when it is empty), sorted by namespace and name as
// kube-apiserver returns them. Label and field selectors, resourceVersion,
// resourceVersionMatch, limit and continue apply to the HelmRelease list
// unchanged, so consistency and paging are kube-apiserver's; the list
// carries the HelmRelease list's resourceVersion and continue token. The one
// exception: a list with resourceVersion "0" ("any version") and no paging
// is served from the ReleaseCache once it has synced, as kube-apiserver
// serves it from its watch cache, with the cache's resourceVersion.
// HelmReleases that carry the kind label but not the kind's name prefix are
// skipped. The three read paths: listFromCache (that exception),
// listStreamed (the ReleaseLister, when set) and listDirect (the client).
func (r *REST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	out := newList(r.NewList().(*unstructured.UnstructuredList))
	lo, selectable, err := r.listOptions(ctx, options, false)
	if err != nil || !selectable {
		return out, err
	}
	complete := (lo.LabelSelector == nil || len(mustRequirements(lo.LabelSelector)) == 1) && lo.FieldSelector == nil && lo.Namespace == "" && lo.Limit == 0
	r.converted.begin(complete)
	defer r.converted.end(complete)
	served := false
	if anyVersion(options) && lo.Limit == 0 && lo.Continue == "" {
		served, err = r.listFromCache(out, lo)
	}
	switch {
	case served:
	case r.lister != nil:
		err = r.listStreamed(ctx, out, lo)
	default:
		err = r.listDirect(ctx, out, lo)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// listFromCache fills out from the ReleaseCache, sorted by namespace and
// name, with the cache's resourceVersion, applying lo's selectors. served
// is false (out untouched) while the cache has not synced.
func (r *REST) listFromCache(out *List, lo *client.ListOptions) (served bool, err error) {
	hrs, ok := r.releases.List(r.kind.Kind, lo.Namespace)
	if !ok {
		return false, nil
	}
	out.SetResourceVersion(r.releases.LastSyncResourceVersion())
	sort.Slice(hrs, func(i, j int) bool {
		if hrs[i].Namespace != hrs[j].Namespace {
			return hrs[i].Namespace < hrs[j].Namespace
		}
		return hrs[i].Name < hrs[j].Name
	})
	for _, hr := range hrs {
		if !lo.LabelSelector.Matches(labels.Set(hr.Labels)) ||
			(lo.FieldSelector != nil && !lo.FieldSelector.Matches(fields.Set{"metadata.name": hr.Name, "metadata.namespace": hr.Namespace})) {
			continue
		}
		if err := r.addItem(out, hr); err != nil {
			return true, err
		}
	}
	return true, nil
}

// listStreamed fills out from kube-apiserver through the ReleaseLister,
// one HelmRelease at a time: an item whose conversion is memoized (same
// UID and resourceVersion) is never decoded.
func (r *REST) listStreamed(ctx context.Context, out *List, lo *client.ListOptions) error {
	meta, err := r.lister.List(ctx, lo.Namespace, lo.AsListOptions(), func(item *ListItem) error {
		if encoded := r.converted.get(item.UID, item.ResourceVersion); encoded != nil && r.memoizable() {
			out.add(encoded)
			return nil
		}
		hr, err := item.Decode()
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		return r.addItem(out, hr)
	})
	if err != nil {
		return r.mapError(err, "")
	}
	out.SetResourceVersion(meta.ResourceVersion)
	out.SetContinue(meta.Continue)
	out.SetRemainingItemCount(meta.RemainingItemCount)
	return nil
}

// listDirect fills out from one typed list of the client (no
// ReleaseLister configured).
func (r *REST) listDirect(ctx context.Context, out *List, lo *client.ListOptions) error {
	hrs := &helmv2.HelmReleaseList{}
	if err := r.client.List(ctx, hrs, lo); err != nil {
		return r.mapError(err, "")
	}
	out.SetResourceVersion(hrs.ResourceVersion)
	out.SetContinue(hrs.Continue)
	out.SetRemainingItemCount(hrs.RemainingItemCount)
	for i := range hrs.Items {
		if err := r.addItem(out, &hrs.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

// addItem converts hr and appends it to out, through the memo of
// conversions: lists share one encoding per HelmRelease resourceVersion,
// and conversions share one spec per distinct values (specs). A
// HelmRelease that is not an application of the kind is skipped.
func (r *REST) addItem(out *List, hr *helmv2.HelmRelease) error {
	if encoded := r.converted.get(hr.UID, hr.ResourceVersion); encoded != nil && r.memoizable() {
		out.add(encoded)
		return nil
	}
	app, err := fromHelmRelease(r.kind, hr, r.specs.get, r.statusHooks())
	if err != nil {
		klog.V(2).InfoS("Skipping HelmRelease", "kind", r.kind.Kind, "err", err)
		return nil
	}
	encoded, err := json.Marshal(app.Object)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("encoding %s %s/%s: %w", r.kind.Kind, app.GetNamespace(), app.GetName(), err))
	}
	if r.memoizable() {
		r.converted.put(hr.UID, hr.ResourceVersion, encoded)
	}
	out.add(encoded)
	return nil
}

// anyVersion reports whether a list may be served at any resourceVersion:
// resourceVersion "0" with no match or NotOlderThan (API concepts,
// "Semantics for get and list").
func anyVersion(o *metainternalversion.ListOptions) bool {
	return o != nil && o.ResourceVersion == "0" &&
		(o.ResourceVersionMatch == "" || o.ResourceVersionMatch == metav1.ResourceVersionMatchNotOlderThan)
}

func mustRequirements(s labels.Selector) labels.Requirements {
	reqs, _ := s.Requirements()
	return reqs
}

// listOptions translates a list or watch request into the HelmRelease
// list: the kind label AND the user's label selector, and the field selector
// with metadata.name mapped to the HelmRelease name. selectable is false
// when the label selector can match nothing.
func (r *REST) listOptions(ctx context.Context, options *metainternalversion.ListOptions, watch bool) (lo *client.ListOptions, selectable bool, err error) {
	if options == nil {
		options = &metainternalversion.ListOptions{}
	}
	ns, _ := genericapirequest.NamespaceFrom(ctx)
	kindReq, err := labels.NewRequirement(v1alpha1.LabelApplicationKind, selection.Equals, []string{r.kind.Kind})
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	sel := labels.NewSelector().Add(*kindReq)
	if options.LabelSelector != nil {
		reqs, ok := options.LabelSelector.Requirements()
		if !ok {
			return nil, false, nil
		}
		sel = sel.Add(reqs...)
	}
	fsel, err := r.fieldSelector(options.FieldSelector)
	if err != nil {
		return nil, false, err
	}
	raw := &metav1.ListOptions{
		ResourceVersion:      options.ResourceVersion,
		ResourceVersionMatch: options.ResourceVersionMatch,
		TimeoutSeconds:       options.TimeoutSeconds,
	}
	if watch {
		raw.AllowWatchBookmarks = options.AllowWatchBookmarks
		raw.SendInitialEvents = options.SendInitialEvents
	}
	return &client.ListOptions{
		Namespace:     ns,
		LabelSelector: sel,
		FieldSelector: fsel,
		Limit:         options.Limit,
		Continue:      options.Continue,
		Raw:           raw,
	}, true, nil
}

// fieldSelector maps the supported field selectors (metadata.name,
// metadata.namespace, as for custom resources) onto the HelmRelease; any
// other field is a 400.
func (r *REST) fieldSelector(s fields.Selector) (fields.Selector, error) {
	if s == nil || s.Empty() {
		return nil, nil
	}
	return s.Transform(func(f, v string) (string, string, error) {
		switch f {
		case "metadata.name":
			return f, r.kind.HelmReleaseName(v), nil
		case "metadata.namespace":
			return f, v, nil
		}
		return "", "", apierrors.NewBadRequest(fmt.Sprintf(
			"field label not supported for %s: %s (supported: metadata.name, metadata.namespace)", r.groupResource(), f))
	})
}
