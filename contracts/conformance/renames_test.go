package conformance_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"cozystack.io/contracts/conformance"
)

func TestRenamedKeys(t *testing.T) {
	doc := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	prev := doc(`{"type":"object","properties":{
		"maxMemory":{"type":"string","default":"64Mi"},
		"tier":{"type":"string"},
		"_cluster":{"type":"object"},
		"resources":{"type":"object","properties":{"cpu":{"type":"string","description":"old"}}},
		"users":{"type":"object","additionalProperties":{"type":"object","properties":{"pass":{"type":"string"}}}}}}`)
	cur := doc(`{"type":"object","properties":{
		"memoryLimit":{"type":"string","default":"64Mi","description":"new"},
		"resources":{"type":"object","properties":{"cores":{"type":"string"}}},
		"users":{"type":"object","additionalProperties":{"type":"object","properties":{"password":{"type":"string"}}}}}}`)
	want := map[string]string{"maxMemory": "memoryLimit", "resources.cpu": "resources.cores", "users.*.pass": "users.*.password"}
	if diff := cmp.Diff(want, conformance.RenamedKeys(prev, cur)); diff != "" {
		t.Errorf("RenamedKeys (-want +got):\n%s", diff)
	}
	if got := conformance.RenamedKeys(prev, prev); len(got) != 0 {
		t.Errorf("RenamedKeys of one schema = %v, want none", got)
	}
}
