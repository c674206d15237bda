package application

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func TestMemo(t *testing.T) {
	var m memo
	a, b := []byte(`{"a":1}`), []byte(`{"b":1}`)
	if get(&m, "a", "1") != nil {
		t.Fatal("empty memo hit")
	}
	m.put("a", "1", a)
	m.put("b", "1", b)
	if string(get(&m, "a", "1")) != string(a) {
		t.Error("same resourceVersion: want the memoized object")
	}
	if get(&m, "a", "2") != nil {
		t.Error("new resourceVersion: want a miss")
	}
	// A complete list that sees only b drops a.
	m.begin(true)
	if string(get(&m, "b", "1")) != string(b) {
		t.Error("b: want a hit")
	}
	m.end(true)
	if get(&m, "a", "1") != nil {
		t.Error("a was not seen by a complete list: want it dropped")
	}
	if string(get(&m, "b", "1")) != string(b) {
		t.Error("b was seen by a complete list: want it kept")
	}
	// A partial list only adds.
	m.begin(false)
	m.put("c", "1", a)
	m.end(false)
	if string(get(&m, "b", "1")) != string(b) || string(get(&m, "c", "1")) != string(a) {
		t.Error("partial list: want b kept and c added")
	}
}

// Objects without a uid or resourceVersion share no memo entry (found by
// review: two such list items would have been served each other's JSON).
func TestMemoNeedsIdentity(t *testing.T) {
	var m memo
	m.put("", "", []byte(`{"a":1}`))
	m.put("a", "", []byte(`{"a":1}`))
	for _, k := range [][2]string{{"", ""}, {"a", ""}} {
		if got := get(&m, k[0], k[1]); got != nil {
			t.Errorf("uid %q rv %q: memo hit %s, want none", k[0], k[1], got)
		}
	}
}

func TestSpecsInterned(t *testing.T) {
	k := storageKind(t)
	var s specs
	a, err := s.get(k, []byte(`{"replicas":3,"_cluster":{"x":"y"}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.get(k, []byte(`{"replicas":3,"_cluster":{"x":"y"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(a).Pointer() != reflect.ValueOf(b).Pointer() {
		t.Error("equal values: want one shared spec")
	}
	want, err := Spec(k, []byte(`{"replicas":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("interned spec differs from Spec (-want +got):\n%s", diff)
	}
	if _, err := s.get(k, []byte(`[1]`)); err == nil {
		t.Error("values that are not an object: want an error")
	}
}

func get(m *memo, uid, rv string) []byte {
	return m.get(types.UID(uid), rv)
}
