package valuesschema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"cozystack.io/contracts/valuesschema"
)

func decode(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The published form keeps what OpenAPI v3 carries, converts what it
// words differently and drops annotations.
func TestOpenAPIPublishes(t *testing.T) {
	props, err := valuesschema.OpenAPI(decode(t, `{
"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","$comment":"c","$defs":{"unused":{}},
"type":"object","additionalProperties":false,"required":["size"],
"properties":{
 "size":{"type":"integer","exclusiveMinimum":0,"maximum":10,"exclusiveMaximum":20,"default":1,"deprecated":true,"x-cozystack-widget":"text"},
 "mode":{"type":"string","const":"fast"},
 "label":{"type":["string","null"]},
 "tags":{"type":"array","items":{"type":"string"},"prefixItems":[{"type":"string"}]},
 "any":true,
 "extra":{"type":"object","additionalProperties":{"type":"string"},"propertyNames":{"pattern":"^a"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if props.Type != "object" || props.AdditionalProperties == nil || props.AdditionalProperties.Allows || len(props.Required) != 1 {
		t.Errorf("root published as %+v", props)
	}
	size := props.Properties["size"]
	if size.Type != "integer" || *size.Minimum != 0 || !size.ExclusiveMinimum || *size.Maximum != 10 || size.ExclusiveMaximum || string(size.Default.Raw) != "1" {
		t.Errorf("size published as %+v", size)
	}
	if mode := props.Properties["mode"]; len(mode.Enum) != 1 || string(mode.Enum[0].Raw) != `"fast"` {
		t.Errorf("mode published as %+v, want enum [fast]", mode)
	}
	if label := props.Properties["label"]; label.Type != "string" || !label.Nullable {
		t.Errorf("label published as %+v, want a nullable string", label)
	}
	if tags := props.Properties["tags"]; tags.Items == nil || tags.Items.Schema.Type != "string" {
		t.Errorf("tags published as %+v", tags)
	}
	if a := props.Properties["any"]; a.XPreserveUnknownFields == nil || !*a.XPreserveUnknownFields {
		t.Errorf("any (true) published as %+v", a)
	}
	if e := props.Properties["extra"]; e.AdditionalProperties == nil || e.AdditionalProperties.Schema.Type != "string" {
		t.Errorf("extra published as %+v", e)
	}
}

// What the published form cannot carry is an OpenAPIError naming the
// keyword, where it is and the fix.
func TestOpenAPIRefuses(t *testing.T) {
	for _, c := range []struct{ name, doc, keyword, pointer, fix string }{
		{"ref", `{"type":"object","$defs":{"p":{"type":"integer"}},"properties":{"port":{"$ref":"#/$defs/p"}}}`, "$ref", "/properties/port", "inline the referenced schema"},
		{"patternProperties", `{"type":"object","patternProperties":{"^a":{"type":"string"}}}`, "patternProperties", "", "propertyNames"},
		{"type list", `{"type":"object","properties":{"v":{"type":["string","integer"]}}}`, "type", "/properties/v", "anyOf"},
		{"null type", `{"type":"object","properties":{"v":{"type":"null"}}}`, "type", "", "nullable"},
		{"false schema", `{"type":"object","properties":{"v":false}}`, "v", "/properties/v", "not: {}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := valuesschema.OpenAPI(decode(t, c.doc))
			var oe *valuesschema.OpenAPIError
			if !errors.As(err, &oe) {
				t.Fatalf("err = %v, want an OpenAPIError", err)
			}
			if oe.Keyword != c.keyword || oe.Pointer != c.pointer || !strings.Contains(err.Error(), c.fix) || !strings.Contains(err.Error(), "kubectl explain") {
				t.Errorf("err = %q (keyword %q at %q), want keyword %q at %q and the fix %q", err, oe.Keyword, oe.Pointer, c.keyword, c.pointer, c.fix)
			}
		})
	}
}

// CEL rules run on the published form: a schema with "$schema" keeps its
// rules (kube-apiserver's structural schema refuses the keyword).
func TestRulesOfSchemaWithDialect(t *testing.T) {
	rules, err := valuesschema.CompileRules(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
"properties":{"n":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.n < 5","message":"n below 5"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if errs := rules.Validate(t.Context(), map[string]any{"n": int64(7)}, nil); len(errs) != 1 || !strings.Contains(errs[0].Error(), "n below 5") {
		t.Errorf("errors %v, want the rule's message", errs)
	}
}
