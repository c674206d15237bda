package clustervalues

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// failures remembers, per tenant namespace, the error of the last failed
// write, for the status reconciler to report; a change pokes it.
type failures struct {
	mu   sync.Mutex
	m    map[string]string
	poke chan event.GenericEvent
}

func newFailures() *failures {
	return &failures{m: map[string]string{}, poke: make(chan event.GenericEvent, 1)}
}

// set records err for namespace.
func (f *failures) set(namespace string, err error) {
	f.mu.Lock()
	changed := f.m[namespace] != err.Error()
	f.m[namespace] = err.Error()
	f.mu.Unlock()
	if changed {
		f.notify()
	}
}

// clear forgets namespace's failure.
func (f *failures) clear(namespace string) {
	f.mu.Lock()
	_, had := f.m[namespace]
	delete(f.m, namespace)
	f.mu.Unlock()
	if had {
		f.notify()
	}
}

// get returns namespace's last failure.
func (f *failures) get(namespace string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	msg, ok := f.m[namespace]
	return msg, ok
}

// notify enqueues a status computation without blocking; one pending poke
// is enough.
func (f *failures) notify() {
	select {
	case f.poke <- event.GenericEvent{Object: &v1alpha1.ClusterValues{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ClusterValuesName}}}:
	default:
	}
}
