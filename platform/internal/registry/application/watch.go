package application

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// Watch watches the applications List would return. Selectors,
// resourceVersion, resourceVersionMatch, allowWatchBookmarks,
// sendInitialEvents and timeoutSeconds go to the HelmRelease watch
// unchanged, so its semantics (and 410 Gone) are kube-apiserver's. Events
// carry applications; a BOOKMARK carries an empty application with only
// metadata.resourceVersion and the k8s.io/initial-events-end annotation
// when kube-apiserver set it; ERROR events pass through. The watch ends
// when the caller stops it, ctx ends, the HelmRelease watch ends or the
// storage is destroyed (Destroy: the kind was removed or redefined). A
// resourceVersion from before the kind's definition (REST.epoch) gets 410
// Gone, so a client never resumes across a removal and re-creation of the
// kind (contract K1, "Lifecycle of a kind").
func (r *REST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	if options != nil && r.epoch > 0 {
		if rv, err := strconv.ParseUint(options.ResourceVersion, 10, 64); err == nil && rv > 0 && rv < r.epoch {
			return nil, apierrors.NewResourceExpired(fmt.Sprintf(
				"too old resource version: %d (kind %s was defined anew at %d, by ApplicationDefinition %s): list again", rv, r.kind.Kind, r.epoch, r.kind.Definition))
		}
	}
	lo, selectable, err := r.listOptions(ctx, options, true)
	if err != nil {
		return nil, err
	}
	if !selectable {
		return watch.NewEmptyWatch(), nil
	}
	ctx, cancel := context.WithCancel(ctx)
	in, err := r.client.Watch(ctx, &helmv2.HelmReleaseList{}, lo)
	if err != nil {
		cancel()
		return nil, r.mapError(err, "")
	}
	out := make(chan watch.Event)
	w := watch.NewProxyWatcher(out)
	go func() {
		defer close(out)
		defer cancel()
		defer in.Stop()
		for {
			select {
			case <-w.StopChan():
				return
			case <-r.destroyed:
				return
			case ev, ok := <-in.ResultChan():
				if !ok {
					return
				}
				translated, ok := r.translateEvent(ev)
				if !ok {
					continue
				}
				select {
				case out <- translated:
				case <-w.StopChan():
					return
				}
			}
		}
	}()
	return w, nil
}

// translateEvent turns a HelmRelease event into an application event; ok is
// false for an event to drop (a HelmRelease that is not an application of
// the kind).
func (r *REST) translateEvent(ev watch.Event) (watch.Event, bool) {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		hr, isHR := ev.Object.(*helmv2.HelmRelease)
		if !isHR {
			return watch.Event{}, false
		}
		app, err := FromHelmRelease(r.kind, hr)
		if err != nil {
			klog.V(2).InfoS("Skipping HelmRelease event", "kind", r.kind.Kind, "err", err)
			return watch.Event{}, false
		}
		return watch.Event{Type: ev.Type, Object: app}, true
	case watch.Bookmark:
		hr, isHR := ev.Object.(*helmv2.HelmRelease)
		if !isHR {
			return watch.Event{}, false
		}
		app := r.New().(*unstructured.Unstructured)
		app.SetResourceVersion(hr.ResourceVersion)
		if v, found := hr.Annotations[metav1.InitialEventsAnnotationKey]; found {
			app.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: v})
		}
		return watch.Event{Type: watch.Bookmark, Object: app}, true
	case watch.Error:
		// Statuses name no object, but may name the HelmRelease resource.
		var mapped *apierrors.StatusError
		if st, isStatus := ev.Object.(*metav1.Status); isStatus && errors.As(r.mapError(&apierrors.StatusError{ErrStatus: *st}, ""), &mapped) {
			return watch.Event{Type: watch.Error, Object: &mapped.ErrStatus}, true
		}
		return ev, true
	}
	return watch.Event{}, false
}
