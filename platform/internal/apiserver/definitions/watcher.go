// Package definitions keeps the application API's set of served kinds in
// step with the ApplicationDefinitions in the cluster, and reports on each
// AD whether its kind is served (condition Served, K1). ADs are watched:
// kinds come and go at run time, without a restart, and a bad AD disables
// only its own kind (brief, section 5, weaknesses 1 and 2).
package definitions

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/kinds"
)

// Watcher watches ApplicationDefinitions. After each change (debounced by
// Settle) it resolves the served set, hands it to OnChange, and writes every
// AD's Served condition.
type Watcher struct {
	// Cache is a started-or-startable controller-runtime cache whose scheme
	// knows cozystack.io/v1alpha1.
	Cache cache.Cache
	// Client writes AD status.
	Client client.Client
	// OnChange receives each new set; it must not block for long.
	OnChange func(*kinds.Set)
	// Settle is how long to wait for more events before resolving; default
	// 50ms, so that a burst of ADs (an installed catalog) is one change.
	Settle time.Duration

	mu      sync.Mutex
	current *kinds.Set
}

// Current returns the last resolved set, or nil before the first.
func (w *Watcher) Current() *kinds.Set {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.current
}

// Run watches until ctx ends. The first set is delivered once the cache has
// synced, so a restarted server never serves a partial set.
func (w *Watcher) Run(ctx context.Context) error {
	if w.Settle == 0 {
		w.Settle = 50 * time.Millisecond
	}
	inf, err := w.Cache.GetInformer(ctx, &v1alpha1.ApplicationDefinition{})
	if err != nil {
		return fmt.Errorf("watch ApplicationDefinitions: %w", err)
	}
	trigger := make(chan struct{}, 1)
	poke := func() {
		select {
		case trigger <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	}); err != nil {
		return err
	}
	if !w.Cache.WaitForCacheSync(ctx) {
		return fmt.Errorf("ApplicationDefinition cache did not sync: %w", ctx.Err())
	}
	poke()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-trigger:
		}
		// Let a burst of events settle into one resolution.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(w.Settle):
		}
		select {
		case <-trigger:
		default:
		}
		if err := w.resolve(ctx); err != nil {
			klog.ErrorS(err, "resolving ApplicationDefinitions")
			// Retry soon: a status write failed, the served set is
			// already current.
			time.AfterFunc(time.Second, poke)
		}
	}
}

func (w *Watcher) resolve(ctx context.Context) error {
	var list v1alpha1.ApplicationDefinitionList
	if err := w.Cache.List(ctx, &list); err != nil {
		return err
	}
	ads := make([]*v1alpha1.ApplicationDefinition, len(list.Items))
	for i := range list.Items {
		ads[i] = &list.Items[i]
	}
	set := kinds.Resolve(ads)
	w.mu.Lock()
	changed := w.current == nil || w.current.Fingerprint() != set.Fingerprint()
	w.current = set
	w.mu.Unlock()
	if changed && w.OnChange != nil {
		w.OnChange(set)
	}
	var errs []string
	for _, ad := range ads {
		if err := w.writeStatus(ctx, ad, set); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("write ApplicationDefinition status: %s", strings.Join(errs, "; "))
	}
	return nil
}

// DesiredStatus is the status an AD should carry under set.
func DesiredStatus(ad *v1alpha1.ApplicationDefinition, set *kinds.Set) v1alpha1.ApplicationDefinitionStatus {
	st := *ad.Status.DeepCopy()
	st.ObservedGeneration = ad.Generation
	cond := metav1.Condition{Type: v1alpha1.ConditionServed, ObservedGeneration: ad.Generation}
	if f, bad := set.Failures[ad.Name]; bad {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, f.Reason, f.Message
		st.Group, st.Version, st.Resource = "", "", ""
	} else if k := set.ByDefinition(ad.Name); k != nil {
		cond.Status, cond.Reason = metav1.ConditionTrue, v1alpha1.ReasonServed
		cond.Message = fmt.Sprintf("kind %s is served as %s/%s, resource %s", k.Kind, kinds.Group, kinds.Version, k.Plural)
		if len(k.Notes) > 0 {
			cond.Message += "; " + strings.Join(k.Notes, "; ")
		}
		st.Group, st.Version, st.Resource = kinds.Group, kinds.Version, k.Plural
	}
	apimeta.SetStatusCondition(&st.Conditions, cond)
	return st
}

func (w *Watcher) writeStatus(ctx context.Context, ad *v1alpha1.ApplicationDefinition, set *kinds.Set) error {
	want := DesiredStatus(ad, set)
	if statusEqual(ad.Status, want) {
		return nil
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var fresh v1alpha1.ApplicationDefinition
		if err := w.Client.Get(ctx, client.ObjectKeyFromObject(ad), &fresh); err != nil {
			return client.IgnoreNotFound(err)
		}
		if fresh.Generation != ad.Generation {
			// A newer version is on its way through the watch.
			return nil
		}
		fresh.Status = DesiredStatus(&fresh, set)
		return w.Client.Status().Update(ctx, &fresh)
	})
}

func statusEqual(a, b v1alpha1.ApplicationDefinitionStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || a.Group != b.Group || a.Version != b.Version || a.Resource != b.Resource {
		return false
	}
	ca := apimeta.FindStatusCondition(a.Conditions, v1alpha1.ConditionServed)
	cb := apimeta.FindStatusCondition(b.Conditions, v1alpha1.ConditionServed)
	if ca == nil || cb == nil {
		return ca == cb
	}
	return ca.Status == cb.Status && ca.Reason == cb.Reason && ca.Message == cb.Message && ca.ObservedGeneration == cb.ObservedGeneration
}
