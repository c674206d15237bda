package appschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var printer = message.NewPrinter(language.English)

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
