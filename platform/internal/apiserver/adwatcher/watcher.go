package adwatcher

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/platform/internal/appcount"
	"cozystack.io/platform/internal/status"
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
	OnChange func(*appkinds.Set)
	// Settle is how long to wait for more events before resolving; default
	// 50ms, so that a burst of ADs (an installed catalog) is one change.
	Settle time.Duration
	// Applications counts the applications of a kind; nil counts none.
	Applications ApplicationCounter
	// Recheck is how often a deleted AD whose kind still has applications
	// is looked at again; default 2s.
	Recheck time.Duration

	mu      sync.Mutex
	current *appkinds.Set
}

// ApplicationCounter counts applications by kind: cozystack-api's
// application.ReleaseCache.
type ApplicationCounter interface {
	// Namespaces returns how many applications of kind each namespace
	// holds, and false when it cannot tell yet (its cache has not synced).
	Namespaces(kind string) (map[string]int, bool)
}

// Current returns the last resolved set, or nil before the first.
func (w *Watcher) Current() *appkinds.Set {
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
	if w.Recheck == 0 {
		w.Recheck = 2 * time.Second
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
		waiting, err := w.resolve(ctx)
		switch {
		case err != nil:
			klog.ErrorS(err, "resolving ApplicationDefinitions")
			// Retry soon: a status write failed, the served set is
			// already current.
			time.AfterFunc(time.Second, poke)
		case waiting:
			// A deleted AD waits for its applications to go; their
			// HelmReleases are not watched here, so look again.
			time.AfterFunc(w.Recheck, poke)
		}
	}
}

// resolve serves the current ADs, keeps the finalizer on each and writes
// their status. waiting is true while a deleted AD waits for the
// applications of its kind to be deleted.
func (w *Watcher) resolve(ctx context.Context) (waiting bool, err error) {
	var list v1alpha1.ApplicationDefinitionList
	if err := w.Cache.List(ctx, &list); err != nil {
		return false, err
	}
	ads := make([]*v1alpha1.ApplicationDefinition, len(list.Items))
	for i := range list.Items {
		ads[i] = &list.Items[i]
	}
	set := appkinds.Resolve(ads)
	w.mu.Lock()
	changed := w.current == nil || w.current.Fingerprint() != set.Fingerprint()
	w.current = set
	w.mu.Unlock()
	if changed && w.OnChange != nil {
		w.OnChange(set)
	}
	var errs []string
	for _, ad := range ads {
		u := w.usage(ad, ads, set)
		switch {
		case ad.DeletionTimestamp.IsZero():
			if err := w.setFinalizer(ctx, ad, true); err != nil {
				errs = append(errs, err.Error())
			}
		case u.release:
			// Gone with the finalizer: no status to write.
			if err := w.setFinalizer(ctx, ad, false); err != nil {
				errs = append(errs, err.Error())
			}
			continue
		default:
			waiting = true
		}
		if err := w.writeStatus(ctx, ad, set, u.note); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return waiting, fmt.Errorf("write ApplicationDefinition: %s", strings.Join(errs, "; "))
	}
	return waiting, nil
}

// usage is what the applications of an AD's kind mean for it.
type usage struct {
	// release: the AD is deleted and may go (no application of its kind
	// is left, or another AD serves the kind).
	release bool
	// note is added to the Served condition: the applications that keep
	// a deleted AD, or that an AD which is not served leaves unseen.
	note string
}

func (w *Watcher) usage(ad *v1alpha1.ApplicationDefinition, ads []*v1alpha1.ApplicationDefinition, set *appkinds.Set) usage {
	kind := ad.Spec.Application.Kind
	_, unserved := set.Failures[ad.Name]
	deleted := !ad.DeletionTimestamp.IsZero()
	if !deleted && !unserved {
		return usage{}
	}
	if deleted && (successor(ad, ads) || servedByAnother(set, ad)) {
		// The applications of the kind stay served: by the successor, or
		// by the AD this one lost the kind to (they were never its own).
		return usage{release: true}
	}
	byNamespace := map[string]int{}
	known := true
	if w.Applications != nil {
		byNamespace, known = w.Applications.Namespaces(kind)
	}
	switch {
	case !known && deleted:
		return usage{note: fmt.Sprintf("the applications of kind %s are being counted; the definition goes once none is left", kind)}
	case !known:
		return usage{}
	case deleted && len(byNamespace) == 0:
		return usage{release: true}
	case deleted && unserved:
		return usage{note: fmt.Sprintf("the ApplicationDefinition is deleted, but kind %s still has %s, and this definition does not serve them: fix it so that they can be deleted through the API, or delete their HelmReleases; the definition then goes. Removing the finalizer %s instead leaves them unserved, their HelmReleases untouched, until a definition of kind %s is applied again",
			kind, appcount.Describe(byNamespace), v1alpha1.FinalizerApplications, kind)}
	case deleted:
		return usage{note: fmt.Sprintf("the ApplicationDefinition is deleted, but kind %s still has %s: the kind stays served, without creates, until they are deleted (kubectl delete %s --all -n <namespace>); the definition then goes. Removing the finalizer %s instead leaves them unserved, their HelmReleases untouched, until a definition of kind %s is applied again",
			kind, appcount.Describe(byNamespace), ad.Spec.Application.Plural, v1alpha1.FinalizerApplications, kind)}
	case len(byNamespace) > 0 && servedKind(set, kind) == nil:
		return usage{note: fmt.Sprintf("kind %s has %s that this definition does not serve until it is fixed; their HelmReleases are untouched", kind, appcount.Describe(byNamespace))}
	}
	return usage{}
}

// successor says whether another AD, not deleted and valid, defines ad's
// kind with its release prefix (so its HelmReleases' names): the
// applications stay served through it.
func successor(ad *v1alpha1.ApplicationDefinition, ads []*v1alpha1.ApplicationDefinition) bool {
	for _, other := range ads {
		if other.Name == ad.Name || !other.DeletionTimestamp.IsZero() || other.Spec.Application.Kind != ad.Spec.Application.Kind ||
			other.Spec.Release.Prefix != ad.Spec.Release.Prefix {
			continue
		}
		if _, f := appkinds.Compile(other); f == nil {
			return true
		}
	}
	return false
}

// servedByAnother says whether an AD other than ad serves ad's kind.
func servedByAnother(set *appkinds.Set, ad *v1alpha1.ApplicationDefinition) bool {
	k := servedKind(set, ad.Spec.Application.Kind)
	return k != nil && k.Definition != ad.Name
}

func servedKind(set *appkinds.Set, kind string) *appkinds.Kind {
	for _, k := range set.ByPlural {
		if k.Kind == kind {
			return k
		}
	}
	return nil
}

// setFinalizer adds or removes v1alpha1.FinalizerApplications on ad.
func (w *Watcher) setFinalizer(ctx context.Context, ad *v1alpha1.ApplicationDefinition, want bool) error {
	if controllerutil.ContainsFinalizer(ad, v1alpha1.FinalizerApplications) == want {
		return nil
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var fresh v1alpha1.ApplicationDefinition
		if err := w.Client.Get(ctx, client.ObjectKeyFromObject(ad), &fresh); err != nil {
			return client.IgnoreNotFound(err)
		}
		if fresh.UID != ad.UID {
			return nil
		}
		var changed bool
		if want {
			if !fresh.DeletionTimestamp.IsZero() {
				return nil // a finalizer cannot be added to a deleted object
			}
			changed = controllerutil.AddFinalizer(&fresh, v1alpha1.FinalizerApplications)
		} else {
			changed = controllerutil.RemoveFinalizer(&fresh, v1alpha1.FinalizerApplications)
		}
		if !changed {
			return nil
		}
		if err := w.Client.Update(ctx, &fresh); err != nil {
			return fmt.Errorf("ApplicationDefinition %s finalizer %s: %w", ad.Name, v1alpha1.FinalizerApplications, err)
		}
		return nil
	})
}

// DesiredStatus is the status an AD should carry under set; note, when not
// empty, ends the Served message (the applications of its kind that keep a
// deleted AD, or that an AD which is not served leaves unseen).
func DesiredStatus(ad *v1alpha1.ApplicationDefinition, set *appkinds.Set, note string) v1alpha1.ApplicationDefinitionStatus {
	out := ad.DeepCopy()
	st := &out.Status
	st.ObservedGeneration = ad.Generation
	cond := metav1.Condition{Type: v1alpha1.ConditionServed}
	if f, bad := set.Failures[ad.Name]; bad {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, f.Reason, f.Message
		st.Group, st.Version, st.Resource = "", "", ""
		if note != "" {
			cond.Message += "; " + note
		}
	} else if k := set.ByDefinition(ad.Name); k != nil {
		cond.Status, cond.Reason = metav1.ConditionTrue, v1alpha1.ReasonServed
		cond.Message = fmt.Sprintf("kind %s is served as %s/%s, resource %s", k.Kind, appkinds.Group, appkinds.Version, k.Plural)
		if len(k.Notes) > 0 {
			cond.Message += "; " + strings.Join(k.Notes, "; ")
		}
		if k.Terminating {
			cond.Reason = v1alpha1.ReasonTerminating
			if note != "" {
				cond.Message = note + "; " + cond.Message
			}
		}
		st.Group, st.Version, st.Resource = appkinds.Group, appkinds.Version, k.Plural
	}
	// observedGeneration is the AD's, and lastTransitionTime moves only
	// with the status, reason or message (status.Set).
	status.Set(out, nil, cond)
	return out.Status
}

func (w *Watcher) writeStatus(ctx context.Context, ad *v1alpha1.ApplicationDefinition, set *appkinds.Set, note string) error {
	want := DesiredStatus(ad, set, note)
	if equality.Semantic.DeepEqual(ad.Status, want) {
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
		fresh.Status = DesiredStatus(&fresh, set, note)
		return w.Client.Status().Update(ctx, &fresh)
	})
}
