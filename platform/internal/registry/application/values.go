package application

import (
	"k8s.io/apimachinery/pkg/api/equality"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"cozystack.io/contracts/valuesschema"
)

// writtenSpec returns the spec an update stores: the request's spec
// without what reading the application added. A read shows the stored
// values with the schema defaults applied, and clients send back what they
// read (kubectl edit, a read-modify-write, an annotation patch), so
// storing the request's spec as it is would freeze today's defaults into
// the values of every object touched, and a later default change would no
// longer reach them (contract K1: values hold what the user wrote). For
// each field: one the request left as read keeps its stored value as
// written (or stays absent when reading added it); one the request changed
// is the request's, its unchanged members treated the same way.
//
// stored is the HelmRelease's values without the "_" keys, read the spec
// the update started from (stored with defaults).
func writtenSpec(spec, stored, read map[string]any) map[string]any {
	out := make(map[string]any, len(spec))
	for k, v := range spec {
		sv, inStored := stored[k]
		rv, inRead := read[k]
		if inRead && equality.Semantic.DeepEqual(v, rv) {
			if inStored {
				out[k] = sv
			}
			continue
		}
		vm, isMap := v.(map[string]any)
		rm, readMap := rv.(map[string]any)
		if !isMap || !readMap {
			out[k] = v
			continue
		}
		sm, _ := sv.(map[string]any)
		sub := writtenSpec(vm, sm, rm)
		if len(sub) == 0 && !inStored && len(vm) > 0 {
			// Every member the request kept is a default.
			continue
		}
		out[k] = sub
	}
	return out
}

// userValues decodes HelmRelease values (JSON) without the top-level "_"
// keys the platform injects; nil or empty values are an empty map.
func userValues(raw []byte) (map[string]any, error) {
	m := map[string]any{}
	if len(raw) == 0 {
		return m, nil
	}
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for k := range m {
		if valuesschema.IsPlatformKey(k) {
			delete(m, k)
		}
	}
	return m, nil
}
