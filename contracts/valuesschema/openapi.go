package valuesschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// OpenAPIError reports a keyword of an openAPISchema that the application
// API cannot publish in the kind's OpenAPI v3 document (what `kubectl
// explain` and kubectl's validation read): Pointer is where it is (a JSON
// pointer into the schema, "" for the root), Keyword the keyword, Fix how
// to write it instead. The rule is contract K1's
// (contracts/schemas/v1alpha1/k1-application.md, "Published OpenAPI").
type OpenAPIError struct {
	Pointer string
	Keyword string
	Problem string
	Fix     string
}

func (e *OpenAPIError) Error() string {
	at := e.Pointer
	if at == "" {
		at = "the root"
	}
	what := "the schema"
	if e.Keyword != "" {
		what = strconv.Quote(e.Keyword)
	}
	return fmt.Sprintf("spec.application.openAPISchema at %s: %s %s, so the kind's OpenAPI (kubectl explain, client-side validation) cannot carry it; %s",
		at, what, e.Problem, e.Fix)
}

// openAPIKeywords are the JSON Schema keywords an OpenAPI v3 schema of a
// Kubernetes API carries as they are (apiextensionsv1.JSONSchemaProps,
// less what structural schemas refuse); the subschema keywords are walked
// separately.
var openAPIKeywords = []string{
	"description", "type", "format", "title", "default", "maximum", "minimum",
	"maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf",
	"enum", "maxProperties", "minProperties", "required", "externalDocs", "example", "nullable",
	"x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
	"x-kubernetes-list-map-keys", "x-kubernetes-list-type", "x-kubernetes-map-type", "x-kubernetes-validations",
}

// refused are keywords whose meaning the published document would change
// if dropped: a reference it cannot follow, or keys kubectl would call
// unknown.
var refused = map[string]struct{ problem, fix string }{
	"$ref":              {"is a reference, which an OpenAPI schema of a Kubernetes API does not follow", "inline the referenced schema"},
	"$dynamicRef":       {"is a reference, which an OpenAPI schema of a Kubernetes API does not follow", "inline the referenced schema"},
	"patternProperties": {"has no OpenAPI v3 equivalent (kubectl would report the matching keys as unknown fields)", "use additionalProperties with propertyNames: {pattern: ...}"},
}

// OpenAPI returns doc, a decoded openAPISchema (JSON Schema 2020-12 with
// the K1 keywords, map[string]any), as the OpenAPI v3 schema the
// application API publishes for the kind's spec. Keywords that only
// annotate ($schema, $id, $comment, $defs and definitions with nothing
// referring to them, deprecated, examples, x-cozystack-*) and validation
// OpenAPI v3 has no word for (propertyNames, if/then/else, dependentRequired,
// prefixItems, contains, unevaluated*...) are left out: the API still
// validates them. const becomes a one-value enum, a numeric
// exclusiveMinimum or exclusiveMaximum a bound with the boolean form, and
// a type list [T, "null"] type T with nullable. Anything else the
// published document cannot carry is an *OpenAPIError naming the keyword
// and the fix. The schema CEL rules run on (CompileRules) is this one.
func OpenAPI(doc map[string]any) (*apiextensionsv1.JSONSchemaProps, error) {
	out, err := toOpenAPI(doc, nil)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	props := &apiextensionsv1.JSONSchemaProps{}
	if err := json.Unmarshal(raw, props); err != nil {
		return nil, &OpenAPIError{Keyword: jsonField(err), Problem: "does not read as OpenAPI v3: " + err.Error(), Fix: "give the keyword the value OpenAPI v3 expects"}
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, &internal, nil); err != nil {
		return nil, &OpenAPIError{Keyword: "type", Problem: "does not convert: " + err.Error(), Fix: "fix the schema as the message says"}
	}
	if validation.SchemaHasInvalidTypes(&internal) {
		return nil, &OpenAPIError{Keyword: "type", Problem: "names a type OpenAPI v3 does not have", Fix: "use array, boolean, integer, number, object or string (nullable: true for null)"}
	}
	if _, err := structuralschema.NewStructural(&internal); err != nil {
		return nil, &OpenAPIError{Problem: "has no structural form: " + err.Error(), Fix: "fix the schema as the message says"}
	}
	return props, nil
}

// jsonField names the field a decoding error is about, "" when it does
// not say.
func jsonField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}

func toOpenAPI(v any, ptr []string) (map[string]any, error) {
	node, ok := v.(map[string]any)
	switch {
	case v == true:
		// Anything: the published form of a schema that admits any value.
		return map[string]any{"x-kubernetes-preserve-unknown-fields": true}, nil
	case !ok:
		return nil, &OpenAPIError{Pointer: jsonPointer(ptr), Keyword: lastOr(ptr, ""), Problem: fmt.Sprintf("is %s, not a schema object", compact(v)),
			Fix: "write an object schema here (a schema that admits nothing is not: {})"}
	}
	at := func(seg ...string) []string { return append(slices.Clone(ptr), seg...) }
	for _, k := range slices.Sorted(maps.Keys(refused)) {
		if _, ok := node[k]; ok {
			r := refused[k]
			return nil, &OpenAPIError{Pointer: jsonPointer(ptr), Keyword: k, Problem: r.problem, Fix: r.fix}
		}
	}
	out := map[string]any{}
	for _, k := range openAPIKeywords {
		if x, ok := node[k]; ok {
			out[k] = x
		}
	}
	if c, ok := node["const"]; ok {
		if _, has := out["enum"]; !has {
			out["enum"] = []any{c}
		}
	}
	if t, ok := node["type"].([]any); ok {
		var types []string
		for _, x := range t {
			if s, _ := x.(string); s != "null" {
				types = append(types, fmt.Sprint(x))
			} else {
				out["nullable"] = true
			}
		}
		if len(types) != 1 {
			return nil, &OpenAPIError{Pointer: jsonPointer(ptr), Keyword: "type", Problem: fmt.Sprintf("lists the types %v, and OpenAPI v3 allows one", t), Fix: "use one type (with nullable: true for null), or anyOf"}
		}
		out["type"] = types[0]
	}
	for _, b := range []struct{ excl, bound string }{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		x, ok := node[b.excl]
		if !ok {
			continue
		}
		if flag, isBool := x.(bool); isBool { // the draft-4 form OpenAPI v3 uses
			out[b.excl] = flag
			continue
		}
		n, ok := number(x)
		if !ok {
			return nil, &OpenAPIError{Pointer: jsonPointer(ptr), Keyword: b.excl, Problem: fmt.Sprintf("is %v, not a number", x), Fix: "give it a number"}
		}
		if cur, has := number(node[b.bound]); has {
			tighter := n.Cmp(cur) >= 0
			if b.bound == "maximum" {
				tighter = n.Cmp(cur) <= 0
			}
			if !tighter {
				continue // the inclusive bound is the tighter one
			}
		}
		out[b.bound], out[b.excl] = x, true
	}
	if m, ok := node["properties"].(map[string]any); ok {
		props := map[string]any{}
		for name, s := range m {
			p, err := toOpenAPI(s, at("properties", name))
			if err != nil {
				return nil, err
			}
			props[name] = p
		}
		out["properties"] = props
	}
	if ap, ok := node["additionalProperties"]; ok {
		if b, isBool := ap.(bool); isBool {
			out["additionalProperties"] = b
		} else {
			s, err := toOpenAPI(ap, at("additionalProperties"))
			if err != nil {
				return nil, err
			}
			out["additionalProperties"] = s
		}
	}
	if it, ok := node["items"]; ok {
		s, err := toOpenAPI(it, at("items"))
		if err != nil {
			return nil, err
		}
		out["items"] = s
	}
	if n, ok := node["not"]; ok {
		s, err := toOpenAPI(n, at("not"))
		if err != nil {
			return nil, err
		}
		out["not"] = s
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		l, ok := node[kw].([]any)
		if !ok {
			continue
		}
		var subs []any
		for i, e := range l {
			s, err := toOpenAPI(e, at(kw, fmt.Sprint(i)))
			if err != nil {
				return nil, err
			}
			subs = append(subs, s)
		}
		out[kw] = subs
	}
	return out, nil
}

// number reads a JSON number decoded as json.Number, float64 or an integer.
func number(v any) (*big.Float, bool) {
	switch n := v.(type) {
	case json.Number:
		f, _, err := big.ParseFloat(n.String(), 10, 128, big.ToNearestEven)
		return f, err == nil
	case float64:
		return big.NewFloat(n), true
	case int64:
		return new(big.Float).SetInt64(n), true
	case int:
		return new(big.Float).SetInt64(int64(n)), true
	}
	return nil, false
}

func jsonPointer(segs []string) string {
	if len(segs) == 0 {
		return ""
	}
	r := strings.NewReplacer("~", "~0", "/", "~1")
	var b strings.Builder
	for _, s := range segs {
		b.WriteString("/" + r.Replace(s))
	}
	return b.String()
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func lastOr(segs []string, def string) string {
	if len(segs) == 0 {
		return def
	}
	return segs[len(segs)-1]
}
