package valuesschema

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefault(t *testing.T) {
	schema := `{"type":"object","properties":{
	  "replicas":{"type":"integer","default":2},
	  "resources":{"type":"object","default":{},"properties":{"cpu":{"type":"string","default":"1"}}},
	  "users":{"type":"object","additionalProperties":{"type":"object","properties":{"admin":{"type":"boolean","default":false}}}},
	  "disks":{"type":"array","items":{"type":"object","properties":{"size":{"type":"string","default":"1Gi"}}}}},
	 "allOf":[{"properties":{"version":{"type":"string","default":"v18"}}}]}`
	for _, tc := range []struct{ name, in, want string }{
		{"empty object gets every default, nested ones included", `{}`,
			`{"replicas":2,"resources":{"cpu":"1"},"version":"v18"}`},
		{"present values are kept", `{"replicas":5,"resources":{"cpu":"4"},"version":"v17"}`,
			`{"replicas":5,"resources":{"cpu":"4"},"version":"v17"}`},
		{"map values and array items", `{"users":{"a":{}},"disks":[{},{"size":"5Gi"}]}`,
			`{"replicas":2,"resources":{"cpu":"1"},"version":"v18","users":{"a":{"admin":false}},"disks":[{"size":"1Gi"},{"size":"5Gi"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s, v, want map[string]any
			for _, d := range []struct {
				text string
				into *map[string]any
			}{{schema, &s}, {tc.in, &v}, {tc.want, &want}} {
				if err := json.Unmarshal([]byte(d.text), d.into); err != nil {
					t.Fatal(err)
				}
			}
			Default(s, v)
			if diff := cmp.Diff(want, v); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// A default is copied, never shared with the schema.
	var s map[string]any
	_ = json.Unmarshal([]byte(schema), &s)
	a, b := map[string]any{}, map[string]any{}
	Default(s, a)
	Default(s, b)
	a["resources"].(map[string]any)["cpu"] = "9"
	if b["resources"].(map[string]any)["cpu"] != "1" {
		t.Error("defaults are shared between objects")
	}
}
