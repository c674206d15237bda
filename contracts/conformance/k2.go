package conformance

import (
	"fmt"
	"slices"
	"strings"
)

// checkK2 reports reads of "_" values that K2 of contract does not
// provide, in the charts' own templates (cozy-lib's reads are K5's: its
// helpers declare them in k5-cozy-lib.json).
func checkK2(charts chartSet, k2 map[string]map[string][]string, contract string) []Finding {
	var out []Finding
	for _, p := range charts.paths() {
		for _, t := range charts[p].templates {
			reads, _ := scanTemplate(t)
			for _, r := range reads {
				if f, bad := k2Finding(r, k2, contract); bad {
					f.File, f.Line = t.Name, r.line
					out = append(out, f)
				}
			}
		}
	}
	return out
}

func k2Finding(r valueRead, k2 map[string]map[string][]string, contract string) (Finding, bool) {
	keys, ok := k2[r.object]
	if !ok {
		return Finding{RuleID: "K2-unknown-object", Severity: Error, Path: readPath(r),
			Message: fmt.Sprintf("the chart reads %s, which nothing provides: the platform writes only _cluster and _namespace (K2 %s), and the application API drops every other top-level value beginning with _ from tenants' specs", readPath(r), contract),
			Fix:     "read the value from _cluster or _namespace (k2-cluster-values.md), or give the chart an ordinary value without the leading _"}, true
	}
	if r.key == "" {
		return Finding{}, false
	}
	subs, ok := keys[r.key]
	if !ok {
		return Finding{RuleID: "K2-unknown-key", Severity: Error, Path: readPath(r),
			Message: fmt.Sprintf("the chart reads %s (through %s), which K2 %s does not provide: it is always absent", readPath(r), r.via, contract) + nearest(r.key, keys),
			Fix:     fmt.Sprintf("read a key k2-cluster-values.md lists for %s, or propose the key as an addition to K2", r.object)}, true
	}
	if r.sub != "" && !slices.Contains(subs, r.sub) {
		return Finding{RuleID: "K2-unknown-key", Severity: Error, Path: readPath(r),
			Message: fmt.Sprintf("the chart reads %s (through %s), which K2 %s does not provide (%s.%s has %s)", readPath(r), r.via, contract, r.object, r.key, listOrNone(subs)),
			Fix:     fmt.Sprintf("read a key k2-cluster-values.md lists for %s.%s", r.object, r.key)}, true
	}
	return Finding{}, false
}

func readPath(r valueRead) string {
	p := r.object
	if r.key != "" {
		p += "." + r.key
	}
	if r.sub != "" {
		p += "." + r.sub
	}
	return p
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "no keys"
	}
	return strings.Join(l, ", ")
}

// nearest suggests a provided key close to key (same words in another
// order or spelling), or "".
func nearest(key string, keys map[string][]string) string {
	best, bestD := "", 4
	for k := range keys {
		if d := editDistance(key, k); d < bestD || d == bestD && k < best {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
