package application

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// ReleaseCache is an informer of the HelmReleases of all applications (those
// carrying v1alpha1.LabelApplicationKind), for reads that Kubernetes semantics let a
// server answer from a cache: a list with resourceVersion "0" ("any
// version", API concepts, "Semantics for get and list"). Consistent reads
// (resourceVersion "") never use it. The cached HelmReleases keep no
// managedFields of their own (the application's live in an annotation), to
// save memory.
type ReleaseCache struct {
	informer toolscache.SharedIndexInformer
}

// indexKindNamespace indexes cached HelmReleases by "<kind>/<namespace>"
// and "<kind>/" (every namespace).
const indexKindNamespace = "kindNamespace"

// NewReleaseCache returns a cache reading through c (which must know
// helmv2); it fills only once Run is called.
func NewReleaseCache(c client.WithWatch) *ReleaseCache {
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			list := &helmv2.HelmReleaseList{}
			err := c.List(ctx, list, client.HasLabels{v1alpha1.LabelApplicationKind}, &client.ListOptions{Raw: &o})
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, &helmv2.HelmReleaseList{}, client.HasLabels{v1alpha1.LabelApplicationKind}, &client.ListOptions{Raw: &o})
		},
	}
	inf := toolscache.NewSharedIndexInformer(lw, &helmv2.HelmRelease{}, 0, toolscache.Indexers{
		indexKindNamespace: func(obj any) ([]string, error) {
			hr, ok := obj.(*helmv2.HelmRelease)
			if !ok {
				return nil, fmt.Errorf("not a HelmRelease: %T", obj)
			}
			kind := hr.Labels[v1alpha1.LabelApplicationKind]
			return []string{kind + "/", kind + "/" + hr.Namespace}, nil
		},
	})
	// The informer owns what it receives; dropping managedFields before it
	// is stored roughly halves a cached HelmRelease.
	_ = inf.SetTransform(func(obj any) (any, error) {
		if hr, ok := obj.(*helmv2.HelmRelease); ok {
			hr.ManagedFields = nil
		}
		return obj, nil
	})
	return &ReleaseCache{informer: inf}
}

// Run fills the cache and keeps it current until ctx ends.
func (rc *ReleaseCache) Run(ctx context.Context) { rc.informer.RunWithContext(ctx) }

// HasSynced reports whether the first full list has been stored.
func (rc *ReleaseCache) HasSynced() bool { return rc.informer.HasSynced() }

// List returns the cached HelmReleases labelled with application kind in
// namespace ns ("" for all namespaces), in no particular order, and ok
// false while the cache has not synced. The objects are the cache's own:
// callers must not modify them.
func (rc *ReleaseCache) List(kind, ns string) (hrs []*helmv2.HelmRelease, ok bool) {
	if rc == nil || !rc.informer.HasSynced() {
		return nil, false
	}
	objs, err := rc.informer.GetIndexer().ByIndex(indexKindNamespace, kind+"/"+ns)
	if err != nil {
		return nil, false
	}
	hrs = make([]*helmv2.HelmRelease, 0, len(objs))
	for _, o := range objs {
		if hr, isHR := o.(*helmv2.HelmRelease); isHR {
			hrs = append(hrs, hr)
		}
	}
	return hrs, true
}

// Namespaces returns how many cached HelmReleases labelled with
// application kind each namespace holds, and ok false while the cache has
// not synced.
func (rc *ReleaseCache) Namespaces(kind string) (byNamespace map[string]int, ok bool) {
	hrs, ok := rc.List(kind, "")
	if !ok {
		return nil, false
	}
	byNamespace = map[string]int{}
	for _, hr := range hrs {
		byNamespace[hr.Namespace]++
	}
	return byNamespace, true
}

// LastSyncResourceVersion is the resourceVersion the cache has caught up
// to, the resourceVersion of a list served from it.
func (rc *ReleaseCache) LastSyncResourceVersion() string {
	return rc.informer.LastSyncResourceVersion()
}

// Get returns the cached HelmRelease ns/name carrying an application kind
// label, and false when the cache has not synced or holds none. The object
// is the cache's own: callers must not modify it.
func (rc *ReleaseCache) Get(ns, name string) (*helmv2.HelmRelease, bool) {
	if rc == nil || !rc.informer.HasSynced() {
		return nil, false
	}
	obj, ok, err := rc.informer.GetIndexer().GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	hr, ok := obj.(*helmv2.HelmRelease)
	return hr, ok
}
