package conformance

import (
	"slices"
	"strings"
)

// RenamedKeys compares the values schema of one application in two
// versions, prev and cur (decoded JSON documents), by the rule of
// K4-key-renamed (contracts/schemas/v1alpha1/k4-values.md, "Across
// versions"): a key prev declares through properties that cur does not
// declare at the same place is renamed when cur declares, at that place, a
// key prev did not, with the same subschema apart from description, title
// and deprecated. It returns old values path → new values path, in the
// form K4 findings name them (resources.maxMemory; "*" for a map's
// values, "[]" for an array's items). Below a removed key nothing is
// compared; the platform keys (PlatformKeys) are skipped. A key removed
// without such a twin is not in the result.
func RenamedKeys(prev, cur any) map[string]string {
	oldKeys, newKeys := declaredKeys(prev, PlatformKeys), declaredKeys(cur, PlatformKeys)
	has, old := map[string]bool{}, map[string]bool{}
	for _, k := range newKeys {
		has[pointer(k.ptr...)] = true
	}
	for _, k := range oldKeys {
		old[pointer(k.ptr...)] = true
	}
	out := map[string]string{}
	var removed []string
	for _, k := range oldKeys {
		ptr := pointer(k.ptr...)
		if has[ptr] || slices.ContainsFunc(removed, func(r string) bool { return strings.HasPrefix(ptr, r+"/") }) {
			continue
		}
		removed = append(removed, ptr)
		for _, n := range newKeys {
			if n.parent == k.parent && !old[pointer(n.ptr...)] && sameSchema(n.schema, k.schema) {
				out[valuePath(k.ptr)] = valuePath(append(pointerSegments(k.parent), "properties", n.name))
				break
			}
		}
	}
	return out
}
