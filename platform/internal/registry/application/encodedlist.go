package application

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// List is what List returns: a <Kind>List held as its items' JSON, made
// once per HelmRelease resourceVersion (see memo). Encoding it for a JSON
// response is a copy (WriteJSON), not a walk of thousands of maps, and the
// memo keeps bytes, not maps.
//
// Nothing can read stale decoded items: Items holds the JSON (so the
// apiserver's meta.LenList and meta.SetList, which find a list's items by
// reflection on that field, see the true count), and the decoded items
// live in an unexported field, filled on first use by the runtime.Unstructured
// methods (EachListItem, UnstructuredContent, DeepCopyObject), the only
// way to reach them.
type List struct {
	decodedList
	// Items are the items as encoding/json writes them (HTML escaped,
	// sorted keys, no trailing newline).
	Items   []json.RawMessage
	decoded bool
}

// decodedList is embedded under an unexported name: its methods (the list
// metadata accessors) are List's, its Items field is not.
type decodedList = unstructured.UnstructuredList

func newList(base *unstructured.UnstructuredList) *List {
	l := &List{decodedList: *base, Items: []json.RawMessage{}}
	l.decodedList.Items = []unstructured.Unstructured{}
	return l
}

// ListOf returns base (its apiVersion, kind, list metadata and items) as a
// List. The error says which item does not encode.
func ListOf(base *unstructured.UnstructuredList) (*List, error) {
	l := newList(&unstructured.UnstructuredList{Object: base.Object})
	for i, item := range base.Items {
		e, err := json.Marshal(item.Object)
		if err != nil {
			return nil, fmt.Errorf("list item %d: %w", i, err)
		}
		l.add(e)
	}
	return l, nil
}

// add appends an item given as its JSON encoding.
func (l *List) add(encoded []byte) { l.Items = append(l.Items, encoded) }

// decode decodes the items into the embedded list (once). The error says
// which item did not decode.
func (l *List) decode() error {
	if l.decoded {
		return nil
	}
	items := make([]unstructured.Unstructured, len(l.Items))
	for i, e := range l.Items {
		// utiljson keeps integers as int64, as the converter made them.
		if err := utiljson.Unmarshal(e, &items[i].Object); err != nil {
			return fmt.Errorf("list item %d: %w", i, err)
		}
	}
	l.decodedList.Items, l.decoded = items, true
	return nil
}

// EachListItem decodes the items, then calls fn for each.
func (l *List) EachListItem(fn func(runtime.Object) error) error {
	if err := l.decode(); err != nil {
		return err
	}
	return l.decodedList.EachListItem(fn)
}

// EachListItemWithAlloc is EachListItem.
func (l *List) EachListItemWithAlloc(fn func(runtime.Object) error) error {
	return l.EachListItem(fn)
}

// UnstructuredContent decodes the items and returns the list as a map.
func (l *List) UnstructuredContent() map[string]any {
	if err := l.decode(); err != nil {
		panic(err) // the bytes were encoded from maps by this package
	}
	return l.decodedList.UnstructuredContent()
}

// DeepCopyObject returns a decoded copy (an UnstructuredList).
func (l *List) DeepCopyObject() runtime.Object {
	if err := l.decode(); err != nil {
		panic(err)
	}
	return l.decodedList.DeepCopy()
}

// MarshalJSON is WriteJSON into a buffer.
func (l *List) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := l.WriteJSON(&buf); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// WriteJSON writes the list exactly as k8s.io/apimachinery's JSON
// serializer writes an UnstructuredList (with StreamingCollectionsEncoding
// or not): the list's keys sorted, "items" among them, and a newline.
func (l *List) WriteJSON(w io.Writer) error {
	keys := make([]string, 0, len(l.Object)+1)
	for k := range l.Object {
		if k != "items" {
			keys = append(keys, k)
		}
	}
	keys = append(keys, "items")
	sort.Strings(keys)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		if k == "items" {
			buf.WriteString(`"items":[`)
			for j, item := range l.Items {
				if j > 0 {
					buf.WriteByte(',')
				}
				buf.Write(item)
				// Flush large lists as they grow instead of holding a
				// second copy of every item.
				if buf.Len() > 1<<20 {
					if _, err := w.Write(buf.Bytes()); err != nil {
						return err
					}
					buf.Reset()
				}
			}
			buf.WriteByte(']')
			continue
		}
		if err := enc.Encode(k); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		buf.WriteByte(':')
		if err := enc.Encode(l.Object[k]); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1)
	}
	buf.WriteString("}\n")
	_, err := w.Write(buf.Bytes())
	return err
}
