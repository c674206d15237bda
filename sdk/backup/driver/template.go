package driver

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Render executes text as a text/template named field with
// Option("missingkey=error") over data. Any parse or execution error
// (an unclosed "{{", a missing map key, a missing struct field) is a
// *TemplateError naming field.
func Render(field, text string, data any) (string, error) {
	t, err := Parse(field, text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", &TemplateError{Field: field, Err: err}
	}
	return b.String(), nil
}

// Parse parses text as Render does, without executing it, so a driver can
// refuse a broken template in ValidateParameters. Errors are
// *TemplateError naming field.
func Parse(field, text string) (*template.Template, error) {
	t, err := template.New(field).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, &TemplateError{Field: field, Err: err}
	}
	return t, nil
}

// RenderJSON renders every string value of the JSON document in (object
// keys are literal) as a template (Render) over data and returns the
// rendered document. Only string values are templates, so data (which may
// hold a tenant's application spec) fills strings and can never add keys,
// objects or list items to what the operator wrote. field is the path of in
// within the parameters (e.g. "backup"); errors are *TemplateError naming
// the full path of the failing value (e.g.
// "backup.spec.template.spec.containers[0].args[1]"), found in key order,
// or a *ParameterError when in is not JSON. A nil in renders to nil.
func RenderJSON(field string, in *apiextensionsv1.JSON, data any) (*apiextensionsv1.JSON, error) {
	if in == nil || len(in.Raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(in.Raw, &v); err != nil {
		return nil, &ParameterError{Field: field, Message: "not JSON: " + err.Error()}
	}
	out, err := renderValue(field, v, data, true)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &apiextensionsv1.JSON{Raw: raw}, nil
}

// ParseJSON parses every string value of in as RenderJSON would render it,
// executing nothing: the first parse error is a *TemplateError.
func ParseJSON(field string, in *apiextensionsv1.JSON) error {
	if in == nil || len(in.Raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(in.Raw, &v); err != nil {
		return &ParameterError{Field: field, Message: "not JSON: " + err.Error()}
	}
	_, err := renderValue(field, v, nil, false)
	return err
}

func renderValue(path string, v any, data any, exec bool) (any, error) {
	switch x := v.(type) {
	case string:
		if !exec {
			_, err := Parse(path, x)
			return x, err
		}
		return Render(path, x, data)
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			r, err := renderValue(join(path, k), x[k], data, exec)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := renderValue(fmt.Sprintf("%s[%d]", path, i), e, data, exec)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	default:
		return v, nil
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
