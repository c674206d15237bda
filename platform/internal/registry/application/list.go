package application

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// List is what List returns: a <Kind>List whose items may carry their JSON
// encoding, made once per HelmRelease resourceVersion (see memo), so that
// encoding a list of thousands of applications is a copy, not a walk of
// thousands of maps. Everything else sees the embedded UnstructuredList.
type List struct {
	unstructured.UnstructuredList
	// Encoded[i] is Items[i].Object as encoding/json writes it (HTML
	// escaped, sorted keys, no trailing newline), or nil when unknown.
	Encoded [][]byte
}

// add appends an item and its JSON (nil if unknown).
func (l *List) add(app *unstructured.Unstructured, encoded []byte) {
	l.Items = append(l.Items, *app)
	l.Encoded = append(l.Encoded, encoded)
}

// WriteJSON writes the list exactly as k8s.io/apimachinery's JSON
// serializer writes an UnstructuredList (with StreamingCollectionsEncoding
// or not): the list's keys sorted, "items" among them, and a newline. ok is
// false, with nothing written, when the items carry no encoding.
func (l *List) WriteJSON(w io.Writer) (ok bool, err error) {
	if len(l.Encoded) != len(l.Items) {
		return false, nil
	}
	for _, e := range l.Encoded {
		if e == nil {
			return false, nil
		}
	}
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
			for j, item := range l.Encoded {
				if j > 0 {
					buf.WriteByte(',')
				}
				buf.Write(item)
				// Flush large lists as they grow instead of holding a
				// second copy of every item.
				if buf.Len() > 1<<20 {
					if _, err := w.Write(buf.Bytes()); err != nil {
						return true, err
					}
					buf.Reset()
				}
			}
			buf.WriteByte(']')
			continue
		}
		if err := enc.Encode(k); err != nil {
			return true, err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		buf.WriteByte(':')
		if err := enc.Encode(l.Object[k]); err != nil {
			return true, err
		}
		buf.Truncate(buf.Len() - 1)
	}
	buf.WriteString("}\n")
	_, err = w.Write(buf.Bytes())
	return true, err
}
