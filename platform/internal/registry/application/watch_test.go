package application

import (
	"slices"
	"testing"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"
)

// next returns the next event of w.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
	}
	panic("unreachable")
}

func TestWatch(t *testing.T) {
	f := newFixture(t, storageKind(t))
	f.create("before", `spec: {}`)
	list, err := f.rest.List(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rv := list.(*List).GetResourceVersion()

	w, err := f.rest.Watch(f.ctx, &metainternalversion.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Only this name: events of the other object must not show.
	named, err := f.rest.Watch(f.ctx, &metainternalversion.ListOptions{ResourceVersion: rv,
		FieldSelector: fields.OneTermEqualSelector("metadata.name", "main")})
	if err != nil {
		t.Fatal(err)
	}
	defer named.Stop()

	f.create("other", `spec: {}`)
	f.create("main", `spec: {replicas: 3}`)
	u := f.get("main")
	_ = unstructured.SetNestedField(u.Object, int64(4), "spec", "replicas")
	if _, _, err := f.rest.Update(f.ctx, "main", rest.DefaultUpdatedObjectInfo(u), nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.rest.Delete(f.ctx, "main", nil, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	type seen struct {
		typ      watch.EventType
		name     string
		replicas int64
	}
	collect := func(w watch.Interface, n int) []seen {
		var out []seen
		for len(out) < n {
			ev := next(t, w)
			if ev.Type == watch.Bookmark {
				continue
			}
			app, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || app.GetKind() != "Postgres" || app.GetAPIVersion() != "apps.cozystack.io/v1alpha1" {
				t.Fatalf("%s event carries %#v, want a Postgres", ev.Type, ev.Object)
			}
			r, _, _ := unstructured.NestedInt64(app.Object, "spec", "replicas")
			out = append(out, seen{ev.Type, app.GetName(), r})
		}
		return out
	}
	want := []seen{{watch.Added, "other", 2}, {watch.Added, "main", 3}, {watch.Modified, "main", 4}, {watch.Deleted, "main", 4}}
	if got := collect(w, 4); !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if got := collect(named, 3); !slices.Equal(got, want[1:]) {
		t.Errorf("metadata.name events %v, want %v", got, want[1:])
	}

	// Stop ends the stream.
	w.Stop()
	select {
	case _, ok := <-w.ResultChan():
		for ok {
			_, ok = <-w.ResultChan()
		}
	case <-time.After(10 * time.Second):
		t.Error("result channel still open 10s after Stop")
	}
}

// With sendInitialEvents the current objects come first, then a bookmark
// marked k8s.io/initial-events-end (the watch-list protocol informers use).
func TestWatchInitialEventsBookmark(t *testing.T) {
	f := newFixture(t, storageKind(t))
	f.create("a", `spec: {}`)
	f.create("b", `spec: {}`)
	w, err := f.rest.Watch(f.ctx, &metainternalversion.ListOptions{
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var added []string
	for {
		ev := next(t, w)
		app := ev.Object.(*unstructured.Unstructured)
		if app.GetKind() != "Postgres" {
			t.Fatalf("%s event of kind %q", ev.Type, app.GetKind())
		}
		if ev.Type == watch.Added {
			added = append(added, app.GetName())
			continue
		}
		if ev.Type != watch.Bookmark {
			t.Fatalf("unexpected %s event", ev.Type)
		}
		if app.GetResourceVersion() == "" {
			t.Error("bookmark without resourceVersion")
		}
		if app.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
			continue // a periodic bookmark
		}
		if app.GetName() != "" || app.Object["spec"] != nil {
			t.Errorf("bookmark carries more than metadata.resourceVersion: %v", app.Object)
		}
		break
	}
	if !slices.Equal(added, []string{"a", "b"}) {
		t.Errorf("initial events %v, want [a b]", added)
	}
}
