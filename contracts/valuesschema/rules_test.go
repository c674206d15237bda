package valuesschema

import (
	"context"
	"errors"
	"strings"
	"testing"
)

const immutableClass = `{"type":"object","properties":{
  "storageClass":{"type":"string","default":"","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"storageClass is immutable"}]},
  "replicas":{"type":"integer","default":1,"x-kubernetes-validations":[{"rule":"self <= 5","message":"at most 5 replicas"}]}}}`

func TestValidateRules(t *testing.T) {
	r, err := CompileRules(immutableClass)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		spec     map[string]any
		old      map[string]any // nil: a create
		wantErrs []string       // substrings, one per error, in order
	}{
		{name: "create", spec: map[string]any{"storageClass": "fast", "replicas": int64(3)}},
		{name: "create over a limit", spec: map[string]any{"replicas": int64(7)}, wantErrs: []string{"spec.replicas: Invalid value: 7: at most 5 replicas"}},
		{name: "update keeping the class", spec: map[string]any{"storageClass": "fast", "replicas": int64(4)}, old: map[string]any{"storageClass": "fast", "replicas": int64(3)}},
		{name: "update changing the class", spec: map[string]any{"storageClass": "slow"}, old: map[string]any{"storageClass": "fast"},
			wantErrs: []string{`spec.storageClass: Invalid value: "slow": storageClass is immutable`}},
		{name: "ratcheting: an unchanged invalid value stays", spec: map[string]any{"replicas": int64(9), "storageClass": "x"}, old: map[string]any{"replicas": int64(9), "storageClass": "y"},
			wantErrs: []string{"storageClass is immutable"}},
		{name: "ratcheting does not cover a changed invalid value", spec: map[string]any{"replicas": int64(8)}, old: map[string]any{"replicas": int64(9)},
			wantErrs: []string{"at most 5 replicas"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := r.Validate(context.Background(), tc.spec, tc.old)
			if len(errs) != len(tc.wantErrs) {
				t.Fatalf("errors %v, want %d: %q", errs, len(tc.wantErrs), tc.wantErrs)
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tc.wantErrs[i]) {
					t.Errorf("error %d: %q, want it to contain %q", i, e.Error(), tc.wantErrs[i])
				}
			}
		})
	}
}

func TestRuleErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"rule does not compile", `{"type":"object","properties":{"a":{"type":"string","x-kubernetes-validations":[{"rule":"self >"}]}}}`, `spec.a: rule 0 "self >"`},
		{"rule of the wrong type", `{"type":"object","properties":{"a":{"type":"string","x-kubernetes-validations":[{"rule":"self + 1"}]}}}`, "spec.a: rule 0"},
		{"unknown variable", `{"type":"object","x-kubernetes-validations":[{"rule":"self.b == nope"}],"properties":{"b":{"type":"string"}}}`, "spec: rule 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompileRules(tc.doc)
			var re *RuleError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile error = %v, want a RuleError containing %q", err, tc.want)
			}
		})
	}
}
