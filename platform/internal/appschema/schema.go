package appschema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/valuesschema"
)

// Schema is a compiled values schema.
type Schema struct {
	raw      map[string]any
	compiled *jsonschema.Schema
	rules    *valuesschema.Rules
	openAPI  *apiextensionsv1.JSONSchemaProps
}

// SyntaxError reports an openAPISchema that is not a JSON object.
type SyntaxError struct{ Err error }

func (e *SyntaxError) Error() string {
	return "spec.application.openAPISchema is not valid JSON: " + e.Err.Error() + "; fix the JSON document"
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// CompileError reports a schema that is JSON but not a valid JSON Schema.
type CompileError struct{ Err error }

func (e *CompileError) Error() string {
	return "spec.application.openAPISchema does not compile as JSON Schema draft 2020-12: " + e.Err.Error()
}

func (e *CompileError) Unwrap() error { return e.Err }

// Compile parses and compiles doc, the openAPISchema string of an AD. An
// empty doc is the schema of a free-form object. Errors are *SyntaxError,
// *CompileError, *valuesschema.OpenAPIError for a schema the kind's
// OpenAPI document cannot carry (valuesschema.OpenAPI) or, for
// x-kubernetes-validations that cannot run, *valuesschema.RuleError.
func Compile(doc string) (*Schema, error) {
	if strings.TrimSpace(doc) == "" {
		doc = `{"type":"object"}`
	}
	var raw any
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, &SyntaxError{Err: err}
	}
	if dec.More() {
		return nil, &SyntaxError{Err: errors.New("trailing data after the JSON document")}
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, &SyntaxError{Err: fmt.Errorf("the document is a %T, not a JSON object", raw)}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mem://openAPISchema.json"
	if err := c.AddResource(url, raw); err != nil {
		return nil, &CompileError{Err: err}
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, &CompileError{Err: err}
	}
	openAPI, err := valuesschema.OpenAPI(obj)
	if err != nil {
		return nil, err
	}
	rules, err := valuesschema.CompileRules(doc)
	if err != nil {
		return nil, err
	}
	// Defaults are copied into objects: keep them in the unstructured
	// value types (int64, float64) the API machinery uses.
	return &Schema{raw: normalize(obj).(map[string]any), compiled: compiled, rules: rules, openAPI: openAPI}, nil
}

// OpenAPI returns the schema as the kind's OpenAPI v3 document publishes
// it (valuesschema.OpenAPI). Callers must not modify it.
func (s *Schema) OpenAPI() *apiextensionsv1.JSONSchemaProps { return s.openAPI }

// ValidateRules evaluates the schema's x-kubernetes-validations
// (valuesschema.Rules) on spec, old being the current spec on update and nil
// on create; both with defaults applied, as Validate takes them. Errors are
// rooted at "spec".
func (s *Schema) ValidateRules(ctx context.Context, spec, old map[string]any) field.ErrorList {
	return s.rules.Validate(ctx, spec, old)
}

// Raw returns the schema document with numbers as int64 or float64. Callers
// must not modify it.
func (s *Schema) Raw() map[string]any { return s.raw }

// normalize converts json.Number into int64 or float64, as unstructured
// objects hold numbers.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalize(x)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = normalize(x)
		}
		return t
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	default:
		return v
	}
}

// Default fills in, in place, every absent field whose schema has a default,
// recursing into present objects and array items (the defaulting rule of
// structural CRD schemas).
func (s *Schema) Default(spec map[string]any) {
	valuesschema.Default(s.raw, spec)
}
