package runbounds

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownedStatus returns the fields of obj's status that manager owns by
// server-side apply of the status subresource (its managedFields entry),
// with their current values, as a JSON object: what manager sent last and
// still owns, which it resends whole (sdk/backup/apply). A manager that
// owns nothing gets an empty map. Errors: a managedFields entry or object
// that does not decode.
func ownedStatus(obj client.Object, manager string) (map[string]any, error) {
	var fields map[string]any
	for _, e := range obj.GetManagedFields() {
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "status" || e.FieldsV1 == nil {
			continue
		}
		if err := json.Unmarshal(e.FieldsV1.Raw, &fields); err != nil {
			return nil, fmt.Errorf("managed fields of %s: %w", manager, err)
		}
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	fs, _ := fields["f:status"].(map[string]any)
	out, _ := extract(fs, u["status"]).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}

// extract returns the parts of the JSON value v that the field set fs
// (managedFields' FieldsV1: "f:<field>", "k:<key>", "v:<value>",
// "i:<index>", "." for the node itself) names.
func extract(fs map[string]any, v any) any {
	switch val := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range fs {
			name, ok := strings.CutPrefix(k, "f:")
			if !ok {
				continue
			}
			if child, ok := val[name]; ok {
				out[name] = extractChild(sub, child)
			}
		}
		return out
	case []any:
		var out []any
		for i, item := range val {
			for k, sub := range fs {
				if key, ok := listMatch(k, i, item); ok {
					got := extractChild(sub, item)
					if m, isMap := got.(map[string]any); isMap {
						// An entry is sent with its keys.
						for kk, kv := range key {
							m[kk] = kv
						}
					}
					out = append(out, got)
					break
				}
			}
		}
		return out
	default:
		return v
	}
}

// extractChild extracts from child what sub names; a leaf ({}) takes it
// whole.
func extractChild(sub, child any) any {
	subfs, _ := sub.(map[string]any)
	if len(subfs) == 0 {
		return child
	}
	return extract(subfs, child)
}

// listMatch reports whether the field-set key k names item, the i-th
// element of a list, returning the key fields of a "k:" key.
func listMatch(k string, i int, item any) (map[string]any, bool) {
	switch {
	case strings.HasPrefix(k, "k:"):
		var key map[string]any
		m, ok := item.(map[string]any)
		if !ok || json.Unmarshal([]byte(k[2:]), &key) != nil {
			return nil, false
		}
		for kk, kv := range key {
			if !sameJSON(m[kk], kv) {
				return nil, false
			}
		}
		return key, true
	case strings.HasPrefix(k, "v:"):
		var want any
		if json.Unmarshal([]byte(k[2:]), &want) != nil {
			return nil, false
		}
		return nil, sameJSON(item, want)
	case strings.HasPrefix(k, "i:"):
		n, err := strconv.Atoi(k[2:])
		return nil, err == nil && n == i
	}
	return nil, false
}

// sameJSON compares two JSON values whatever their Go number types.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return false
	}
	var na, nb any
	_ = json.Unmarshal(ja, &na)
	_ = json.Unmarshal(jb, &nb)
	return reflect.DeepEqual(na, nb)
}
