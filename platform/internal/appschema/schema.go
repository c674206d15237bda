package appschema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/valuesschema"
)

var printer = message.NewPrinter(language.English)

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

// Validate checks spec against the schema and returns one error per failing
// field, with paths such as spec.replicas or spec.users[0].name.
func (s *Schema) Validate(spec map[string]any) field.ErrorList {
	err := s.compiled.Validate(toJSONValue(spec))
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	for _, leaf := range Leaves(ve) {
		e := toFieldError(spec, leaf)
		if key := e.Error(); !seen[key] {
			seen[key] = true
			errs = append(errs, e)
		}
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return errs
}

// Leaves are the innermost causes of a JSON Schema validation error, the
// ones that name a field and what is wrong with it (the outer ones only
// say "allOf failed").
func Leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, Leaves(c)...)
	}
	return out
}

func toFieldError(spec map[string]any, e *jsonschema.ValidationError) *field.Error {
	path, value := instancePath(spec, e.InstanceLocation)
	msg := e.ErrorKind.LocalizedString(printer)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		if len(k.Missing) > 0 {
			return field.Required(path.Child(k.Missing[0]), "required by the schema of this kind")
		}
	case *kind.AdditionalProperties:
		if len(k.Properties) > 0 {
			return field.Forbidden(path.Child(k.Properties[0]), "unknown field: the schema of this kind does not allow it")
		}
	case *kind.Enum:
		vals := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			vals = append(vals, fmt.Sprint(w))
		}
		return field.NotSupported(path, value, vals)
	}
	return field.Invalid(path, value, msg)
}

// instancePath turns a JSON pointer's tokens into a field path, using the
// instance to tell array indexes from object keys.
func instancePath(spec map[string]any, tokens []string) (*field.Path, any) {
	p := field.NewPath("spec")
	var cur any = spec
	for _, t := range tokens {
		switch v := cur.(type) {
		case []any:
			i, err := strconv.Atoi(t)
			if err == nil && i >= 0 && i < len(v) {
				p = p.Index(i)
				cur = v[i]
				continue
			}
			p = p.Child(t)
			cur = nil
		case map[string]any:
			p = p.Child(t)
			cur = v[t]
		default:
			p = p.Child(t)
			cur = nil
		}
	}
	return p, cur
}

// toJSONValue converts the unstructured value types (int64) to the ones the
// validator expects.
func toJSONValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = toJSONValue(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = toJSONValue(x)
		}
		return out
	case int64:
		return json.Number(strconv.FormatInt(t, 10))
	case int:
		return json.Number(strconv.Itoa(t))
	case int32:
		return json.Number(strconv.FormatInt(int64(t), 10))
	case float64:
		return json.Number(strconv.FormatFloat(t, 'g', -1, 64))
	default:
		return v
	}
}

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

// UnknownFields returns the paths of fields the schema does not know, in
// lexical order.
func (s *Schema) UnknownFields(spec map[string]any) []string {
	var out []string
	walkUnknown(s.raw, spec, field.NewPath("spec"), nil, func(p *field.Path, _ []string, _ map[string]any, _ string) {
		out = append(out, p.String())
	})
	sort.Strings(out)
	return out
}

// UnknownField is a field of a spec the schema does not know.
type UnknownField struct {
	// Path is the field's path from spec ("spec.users[app].colour").
	Path *field.Path
	// Keys are the object keys from spec down to the field, so a JSON
	// merge patch can name it; nil when an array lies on the way (a merge
	// patch replaces arrays whole).
	Keys []string
	// Value is the field's value (nil for a JSON null).
	Value any
}

// Unknown returns the fields UnknownFields reports with their values, in
// the same order.
func (s *Schema) Unknown(spec map[string]any) []UnknownField {
	var out []UnknownField
	walkUnknown(s.raw, spec, field.NewPath("spec"), []string{}, func(p *field.Path, keys []string, parent map[string]any, key string) {
		out = append(out, UnknownField{Path: p, Keys: keys, Value: parent[key]})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path.String() < out[j].Path.String() })
	return out
}

// Prune removes the fields UnknownFields reports and returns their paths.
func (s *Schema) Prune(spec map[string]any) []string {
	var out []string
	walkUnknown(s.raw, spec, field.NewPath("spec"), nil, func(p *field.Path, _ []string, parent map[string]any, key string) {
		out = append(out, p.String())
		delete(parent, key)
	})
	sort.Strings(out)
	return out
}

// walkUnknown calls found for each field of v its schema does not know;
// keys are the object keys down to v (nil below an array).
func walkUnknown(schema map[string]any, v any, path *field.Path, keys []string, found func(*field.Path, []string, map[string]any, string)) {
	switch t := v.(type) {
	case map[string]any:
		known := map[string]map[string]any{}
		var additional map[string]any
		hasProps, open := false, false
		for _, node := range valuesschema.Branches(schema) {
			if preserve, _ := node["x-kubernetes-preserve-unknown-fields"].(bool); preserve {
				open = true
			}
			if props, ok := node["properties"].(map[string]any); ok {
				hasProps = true
				for name, ps := range props {
					if m, ok := ps.(map[string]any); ok {
						known[name] = m
					}
				}
			}
			switch ap := node["additionalProperties"].(type) {
			case bool:
				open = open || ap
			case map[string]any:
				additional = ap
			}
		}
		free := !hasProps && additional == nil
		for _, name := range sortedKeys(t) {
			child := path.Child(name)
			var sub []string
			if keys != nil {
				sub = append(slices.Clip(keys), name)
			}
			if ps, ok := known[name]; ok {
				walkUnknown(ps, t[name], child, sub, found)
				continue
			}
			if additional != nil {
				walkUnknown(additional, t[name], path.Key(name), sub, found)
				continue
			}
			if open || free {
				continue
			}
			found(child, sub, t, name)
		}
	case []any:
		for _, node := range valuesschema.Branches(schema) {
			if items, ok := node["items"].(map[string]any); ok {
				for i, x := range t {
					walkUnknown(items, x, path.Index(i), nil, found)
				}
			}
		}
	}
}

// Deprecated returns a message per field present in spec whose schema says
// "deprecated": true, for Warning headers.
func (s *Schema) Deprecated(spec map[string]any) []string {
	var out []string
	walkDeprecated(s.raw, spec, field.NewPath("spec"), &out)
	sort.Strings(out)
	return out
}

func walkDeprecated(schema map[string]any, v any, path *field.Path, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		for _, node := range valuesschema.Branches(schema) {
			props, _ := node["properties"].(map[string]any)
			for name, ps := range props {
				m, ok := ps.(map[string]any)
				if !ok {
					continue
				}
				val, present := t[name]
				if !present {
					continue
				}
				if dep, _ := m["deprecated"].(bool); dep {
					msg := path.Child(name).String() + " is deprecated"
					if d, _ := m["description"].(string); d != "" {
						msg += ": " + d
					}
					*out = append(*out, msg)
				}
				walkDeprecated(m, val, path.Child(name), out)
			}
		}
	case []any:
		for _, node := range valuesschema.Branches(schema) {
			if items, ok := node["items"].(map[string]any); ok {
				for i, x := range t {
					walkDeprecated(items, x, path.Index(i), out)
				}
			}
		}
	}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// HostField is a value of spec in a field whose schema says
// "x-cozystack-host": true (contract K1): the field names a host.
type HostField struct {
	Path  *field.Path
	Value string
}

// Hosts returns every non-empty string in spec at a field marked
// x-cozystack-host, in a stable order, through properties, items and
// additionalProperties.
func (s *Schema) Hosts(spec map[string]any) []HostField {
	var out []HostField
	isHost := func(v any) bool { t, ok := v.(string); return ok && t != "" }
	for _, m := range marked(s.raw, spec, "x-cozystack-host", isHost) {
		out = append(out, HostField{Path: m.path, Value: m.value.(string)})
	}
	return out
}

// markedValue is a value of spec at a field whose schema carries a marker.
type markedValue struct {
	path  *field.Path
	value any
}

// marked returns every value of spec that accept takes at a field whose
// schema (or one of its allOf/anyOf/oneOf branches) says "<marker>": true,
// walking properties, additionalProperties and items, in path order and
// each path once (branches may reach one field twice). Below a marked
// value nothing is looked at.
func marked(schema map[string]any, spec map[string]any, marker string, accept func(any) bool) []markedValue {
	var out []markedValue
	walkMarked(schema, spec, field.NewPath("spec"), marker, accept, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].path.String() < out[j].path.String() })
	return slices.CompactFunc(out, func(a, b markedValue) bool { return a.path.String() == b.path.String() })
}

func walkMarked(schema map[string]any, v any, path *field.Path, marker string, accept func(any) bool, out *[]markedValue) {
	if accept(v) {
		for _, node := range valuesschema.Branches(schema) {
			if on, _ := node[marker].(bool); on {
				*out = append(*out, markedValue{path: path, value: v})
				return
			}
		}
	}
	switch t := v.(type) {
	case map[string]any:
		for _, node := range valuesschema.Branches(schema) {
			props, _ := node["properties"].(map[string]any)
			for _, name := range sortedKeys(t) {
				if ps, ok := props[name].(map[string]any); ok {
					walkMarked(ps, t[name], path.Child(name), marker, accept, out)
				} else if ap, ok := node["additionalProperties"].(map[string]any); ok {
					walkMarked(ap, t[name], path.Key(name), marker, accept, out)
				}
			}
		}
	case []any:
		for _, node := range valuesschema.Branches(schema) {
			if items, ok := node["items"].(map[string]any); ok {
				for i, x := range t {
					walkMarked(items, x, path.Index(i), marker, accept, out)
				}
			}
		}
	}
}

// RestoreOnlyField is a value of spec in a field whose schema says
// "x-cozystack-restore-only": true (contract K1, "Restore-only fields"):
// only the backup core's restore sets it.
type RestoreOnlyField struct {
	Path  *field.Path
	Value any
}

// RestoreOnly returns every non-empty value in spec at a field marked
// x-cozystack-restore-only, in a stable order, through properties, items
// and additionalProperties. Empty is absent, null, "", an empty list or an
// object whose every value is empty (so a schema default of {} sets
// nothing).
func (s *Schema) RestoreOnly(spec map[string]any) []RestoreOnlyField {
	var out []RestoreOnlyField
	for _, m := range marked(s.raw, spec, "x-cozystack-restore-only", func(v any) bool { return !IsEmpty(v) }) {
		out = append(out, RestoreOnlyField{Path: m.path, Value: m.value})
	}
	return out
}

// IsEmpty reports whether v is empty as RestoreOnly counts it.
func IsEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case map[string]any:
		for _, x := range t {
			if !IsEmpty(x) {
				return false
			}
		}
		return true
	}
	return false
}
