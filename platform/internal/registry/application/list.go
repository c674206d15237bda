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
// memo keeps bytes, not maps. Items are decoded on first use through the
// runtime.Unstructured methods (EachListItem, UnstructuredContent, ...) or
// Materialize; code that reads the Items field directly must call
// Materialize first.
type List struct {
	unstructured.UnstructuredList
	// encoded[i] is item i as encoding/json writes it (HTML escaped,
	// sorted keys, no trailing newline).
	encoded      [][]byte
	materialized bool
}

func newList(base *unstructured.UnstructuredList) *List {
	l := &List{UnstructuredList: *base, encoded: [][]byte{}}
	l.Items = []unstructured.Unstructured{}
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
func (l *List) add(encoded []byte) { l.encoded = append(l.encoded, encoded) }

// Materialize decodes the items into Items (once). The error says which
// item did not decode.
func (l *List) Materialize() error {
	if l.materialized {
		return nil
	}
	items := make([]unstructured.Unstructured, len(l.encoded))
	for i, e := range l.encoded {
		// utiljson keeps integers as int64, as the converter made them.
		if err := utiljson.Unmarshal(e, &items[i].Object); err != nil {
			return fmt.Errorf("list item %d: %w", i, err)
		}
	}
	l.Items, l.materialized = items, true
	return nil
}

// EachListItem decodes the items, then calls fn for each.
func (l *List) EachListItem(fn func(runtime.Object) error) error {
	if err := l.Materialize(); err != nil {
		return err
	}
	return l.UnstructuredList.EachListItem(fn)
}

// EachListItemWithAlloc is EachListItem.
func (l *List) EachListItemWithAlloc(fn func(runtime.Object) error) error {
	return l.EachListItem(fn)
}

// UnstructuredContent decodes the items and returns the list as a map.
func (l *List) UnstructuredContent() map[string]any {
	if err := l.Materialize(); err != nil {
		panic(err) // the bytes were encoded from maps by this package
	}
	return l.UnstructuredList.UnstructuredContent()
}

// DeepCopyObject returns a decoded copy (an UnstructuredList).
func (l *List) DeepCopyObject() runtime.Object {
	if err := l.Materialize(); err != nil {
		panic(err)
	}
	return l.UnstructuredList.DeepCopy()
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
			for j, item := range l.encoded {
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
