package manifests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Decode returns every object of every *.yaml file at the root of fsys, in
// file-name order and document order within a file: fresh objects on each
// call. Empty documents are skipped. The error names the file and document
// that does not decode.
func Decode(fsys fs.FS) ([]*unstructured.Unstructured, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && path.Ext(e.Name()) == ".yaml" {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var out []*unstructured.Unstructured
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for doc := 1; ; doc++ {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s, document %d: %w", name, doc, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// Apply server-side applies objs in order with c as field manager owner,
// taking ownership of conflicting fields (the platform's own objects: a
// change by hand is put back). The error names the object that failed.
func Apply(ctx context.Context, c client.Client, owner string, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if err := c.Patch(ctx, o, client.Apply, client.FieldOwner(owner), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}
