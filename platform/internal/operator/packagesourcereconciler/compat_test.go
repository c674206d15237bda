package packagesourcereconciler

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCheckValues: which stored values a new schema of a kind no longer
// accepts (docs/operator/catalogs.md, "Catalog delivery"), by key, with renames named.
func TestCheckValues(t *testing.T) {
	const v1 = `{"type":"object","additionalProperties":false,"properties":{
		"maxMemory":{"type":"string","default":"64Mi"},
		"tier":{"type":"string","enum":["small","medium","large"]},
		"resources":{"type":"object","additionalProperties":false,"properties":{
			"cpu":{"type":"string"},"disk":{"type":"integer"}}}}}`
	app := func(ns, values string) StoredValues {
		return StoredValues{Namespace: ns, Name: "a", Values: []byte(values)}
	}
	for _, tc := range []struct {
		name       string
		reason     string
		next       string
		apps       []StoredValues
		want       []KeyChange
		namespaces map[string]int
	}{{
		name:   "renamed key",
		reason: "a renamed key under additionalProperties: false refuses stored values that use the old name",
		next: `{"type":"object","additionalProperties":false,"properties":{
			"memoryLimit":{"type":"string","default":"64Mi"},
			"tier":{"type":"string","enum":["small","medium","large"]},
			"resources":{"type":"object","additionalProperties":false,"properties":{"cpu":{"type":"string"},"disk":{"type":"integer"}}}}}`,
		apps:       []StoredValues{app("t-a", `{"maxMemory":"128Mi"}`), app("t-a", `{"tier":"small"}`), app("t-b", `{"maxMemory":"1Gi","tier":"large"}`)},
		want:       []KeyChange{{Path: "maxMemory", RenamedTo: "memoryLimit", Problem: problemUndeclared, Applications: 2}},
		namespaces: map[string]int{"t-a": 1, "t-b": 1},
	}, {
		name:   "removed key",
		reason: "a removed key refuses stored values that set it",
		next: `{"type":"object","additionalProperties":false,"properties":{
			"maxMemory":{"type":"string","default":"64Mi"},
			"resources":{"type":"object","additionalProperties":false,"properties":{"cpu":{"type":"string"},"disk":{"type":"integer"}}}}}`,
		apps:       []StoredValues{app("t-a", `{"tier":"small"}`), app("t-a", `{"maxMemory":"1Gi"}`)},
		want:       []KeyChange{{Path: "tier", Problem: problemUndeclared, Applications: 1}},
		namespaces: map[string]int{"t-a": 1},
	}, {
		name:   "narrowed enum",
		reason: "a narrowed enum refuses stored values outside it",
		next: `{"type":"object","additionalProperties":false,"properties":{
			"maxMemory":{"type":"string","default":"64Mi"},
			"tier":{"type":"string","enum":["small","medium"]},
			"resources":{"type":"object","additionalProperties":false,"properties":{"cpu":{"type":"string"},"disk":{"type":"integer"}}}}}`,
		apps:       []StoredValues{app("t-a", `{"tier":"large"}`), app("t-b", `{"tier":"small"}`)},
		want:       []KeyChange{{Path: "tier", Problem: `Unsupported value: "large": supported values: "small", "medium"`, Applications: 1}},
		namespaces: map[string]int{"t-a": 1},
	}, {
		name:   "nested key renamed and narrowed type",
		reason: "nested keys are checked by their full path, renames and type changes both",
		next: `{"type":"object","additionalProperties":false,"properties":{
			"maxMemory":{"type":"string","default":"64Mi"},
			"tier":{"type":"string","enum":["small","medium","large"]},
			"resources":{"type":"object","additionalProperties":false,"properties":{"cores":{"type":"string"},"disk":{"type":"string"}}}}}`,
		apps: []StoredValues{app("t-a", `{"resources":{"cpu":"2","disk":10}}`)},
		want: []KeyChange{
			{Path: "resources.cpu", RenamedTo: "resources.cores", Problem: problemUndeclared, Applications: 1},
			{Path: "resources.disk", Problem: `Invalid value: 10: got number, want string`, Applications: 1},
		},
		namespaces: map[string]int{"t-a": 1},
	}, {
		name:   "platform keys are not the tenant's",
		reason: "the platform's _cluster and _namespace keys are not tenant values and never count",
		next:   `{"type":"object","additionalProperties":false,"properties":{"maxMemory":{"type":"string"}}}`,
		apps:   []StoredValues{app("t-a", `{"_cluster":{"domain":"x"},"_namespace":{"host":"y"},"maxMemory":"1Gi"}`)},
	}, {
		name:   "compatible addition",
		reason: "adding a key breaks no stored values",
		next: `{"type":"object","additionalProperties":false,"properties":{
			"maxMemory":{"type":"string","default":"64Mi"},
			"replicas":{"type":"integer","default":1},
			"tier":{"type":"string","enum":["small","medium","large","huge"]},
			"resources":{"type":"object","additionalProperties":false,"properties":{"cpu":{"type":"string"},"disk":{"type":"integer"},"gpu":{"type":"integer"}}}}}`,
		apps: []StoredValues{app("t-a", `{"maxMemory":"1Gi","tier":"large","resources":{"cpu":"1","disk":3}}`), app("t-b", ``)},
	}, {
		name:   "the documented deprecation keeps the old key one version",
		reason: "a key deprecated as documented stays accepted for one version",
		next: `{"type":"object","additionalProperties":false,"properties":{
			"maxMemory":{"type":"string","deprecated":true},
			"memoryLimit":{"type":"string","default":"64Mi"},
			"tier":{"type":"string","enum":["small","medium","large"]},
			"resources":{"type":"object","additionalProperties":false,"properties":{"cpu":{"type":"string"},"disk":{"type":"integer"}}}}}`,
		apps: []StoredValues{app("t-a", `{"maxMemory":"128Mi"}`)},
	}, {
		name:   "what the served schema already refused is not counted",
		reason: "values the served schema already refused are not counted against the new one",
		next:   `{"type":"object","additionalProperties":false,"properties":{"maxMemory":{"type":"string","default":"64Mi"}}}`,
		apps:   []StoredValues{app("t-a", `{"stale":true}`)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s: %s", tc.name, tc.reason)
				}
			})
			got, namespaces := CheckValues(v1, tc.next, tc.apps)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.namespaces, namespaces); diff != "" {
				t.Errorf("namespaces (-want +got):\n%s", diff)
			}
		})
	}
	// Keys below arrays and maps are named as K4 names them.
	const lists = `{"type":"object","additionalProperties":false,"properties":{
		"users":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"%s":{"type":"string"}}}},
		"dbs":{"type":"object","additionalProperties":{"type":"object","additionalProperties":false,"properties":{"%s":{"type":"integer"}}}}}}`
	got, _ := CheckValues(fmt.Sprintf(lists, "name", "size"), fmt.Sprintf(lists, "login", "sizeGi"),
		[]StoredValues{app("t-a", `{"users":[{"name":"a"},{"name":"b"}],"dbs":{"main":{"size":1}}}`)})
	want := []KeyChange{
		{Path: "dbs.*.size", RenamedTo: "dbs.*.sizeGi", Problem: problemUndeclared, Applications: 1},
		{Path: "users.[].name", RenamedTo: "users.[].login", Problem: problemUndeclared, Applications: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys below arrays and maps (-want +got):\n%s", diff)
	}
	if got, _ := CheckValues(v1, v1, []StoredValues{app("t-a", `{"unknown":1}`)}); got != nil {
		t.Errorf("an unchanged schema: %v, want nothing", got)
	}
}

func TestIncompatibilityString(t *testing.T) {
	got := Incompatibility{Definition: "cache", Kind: "Cache", Namespaces: map[string]int{"t-a": 2, "t-b": 1},
		Keys: []KeyChange{{Path: "maxMemory", RenamedTo: "memoryLimit", Problem: problemUndeclared}, {Path: "tier", Problem: problemUndeclared}, {Path: "x", Problem: "Invalid value"}}}.String()
	want := "kind Cache (ApplicationDefinition cache): maxMemory renamed to memoryLimit, tier no longer declared, x: Invalid value, stored by 3 applications in 2 namespaces (t-a: 2, t-b: 1)"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
