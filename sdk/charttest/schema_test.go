package charttest

import (
	"slices"
	"testing"
)

func TestStrictnessViolations(t *testing.T) {
	schema := map[string]any{
		"type": "object", "additionalProperties": false,
		"properties": map[string]any{
			"_cluster": map[string]any{"type": "object"},
			"strict":   map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}},
			"open":     map[string]any{"type": "object"},
			"loose":    map[string]any{"type": "object", "additionalProperties": true},
			"users": map[string]any{"type": "object", "additionalProperties": map[string]any{
				"type": "object", "properties": map[string]any{"password": map[string]any{"type": "string"}},
			}},
			"list": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
		},
	}
	got := StrictnessViolations(schema)
	want := []string{"/list/[]", "/loose", "/open", "/users/*"}
	if !slices.Equal(got, want) {
		t.Errorf("violations %v, want %v", got, want)
	}
	paths := StrictPaths(schema)
	if len(paths) != 2 || len(paths[0]) != 0 || !slices.Equal(paths[1], []string{"strict"}) {
		t.Errorf("strict paths %v, want [] and [strict]", paths)
	}
	v := WithUnknownKey(map[string]any{"users": map[string]any{}}, []string{"users", "x"})
	if v["users"].(map[string]any)["x"].(map[string]any)[UnknownKey] != true {
		t.Errorf("WithUnknownKey: %v", v)
	}
}
