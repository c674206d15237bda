package application

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"cozystack.io/platform/internal/apiserver/appkinds"
)

// memo keeps the JSON of the last conversion of each HelmRelease listed,
// by UID, valid for one resourceVersion: a resourceVersion names one
// content of the HelmRelease, and a kind's REST (so its schema defaults) is
// replaced when its ApplicationDefinition changes, so a hit is exactly what
// FromHelmRelease would return. Bytes, not maps: they are what a list
// response needs, and a fraction of the memory.
//
// A list that saw every HelmRelease of the kind (begin(true) ... end(true))
// replaces the memo with what it saw, so deleted objects do not linger;
// other lists only add, up to memoMax entries.
type memo struct {
	mu      sync.Mutex
	entries map[types.UID]memoEntry
	seen    map[types.UID]memoEntry // filled between begin(true) and end(true)
}

type memoEntry struct {
	resourceVersion string
	json            []byte
}

// memoMax bounds the memo between complete lists.
const memoMax = 100000

// get returns the memoized JSON of uid at rv, or nil. An object without a
// uid or resourceVersion is never memoized.
func (m *memo) get(uid types.UID, rv string) []byte {
	if uid == "" || rv == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[uid]
	if !ok || e.resourceVersion != rv {
		return nil
	}
	if m.seen != nil {
		m.seen[uid] = e
	}
	return e.json
}

// put memoizes encoded, the JSON of the conversion of uid at rv.
func (m *memo) put(uid types.UID, rv string, encoded []byte) {
	if uid == "" || rv == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil || len(m.entries) >= memoMax {
		m.entries = map[types.UID]memoEntry{}
	}
	e := memoEntry{resourceVersion: rv, json: encoded}
	m.entries[uid] = e
	if m.seen != nil {
		m.seen[uid] = e
	}
}

// begin starts a list; complete says it will see every HelmRelease of the
// kind. Concurrent complete lists may overlap: the last to end wins, and
// any entry it misses is only converted again.
func (m *memo) begin(complete bool) {
	if !complete {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = map[types.UID]memoEntry{}
}

func (m *memo) end(complete bool) {
	if !complete {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen != nil {
		m.entries, m.seen = m.seen, nil
	}
}

// specs interns the specs of listed applications by their HelmRelease
// values: applications with the same values have equal specs once
// defaulted, so a list converting thousands of them decodes and defaults
// each distinct values once. The maps are only read (encoded).
type specs struct {
	mu      sync.Mutex
	entries map[string]map[string]any
}

// specsMax bounds the distinct values interned; past it the set restarts.
const specsMax = 4096

// get is Spec(k, values) through the intern set. The map returned is shared
// and must not be modified.
func (s *specs) get(k *appkinds.Kind, values []byte) (map[string]any, error) {
	s.mu.Lock()
	spec, ok := s.entries[string(values)]
	s.mu.Unlock()
	if ok {
		return spec, nil
	}
	spec, err := Spec(k, values)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil || len(s.entries) >= specsMax {
		s.entries = map[string]map[string]any{}
	}
	s.entries[string(values)] = spec
	return spec, nil
}
