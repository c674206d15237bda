package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// schemaError is one failure of a JSON Schema validation: the instance
// location and a message.
type schemaError struct {
	loc []string
	msg string
}

// schemaErrors flattens a validation error into its leaves; an anyOf or
// oneOf that failed is one error at its own location listing what each
// branch wanted. A propertyNames failure is located by searching instance
// for the property (the validator's location for it is unreliable).
func schemaErrors(err error, instance any) []schemaError {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []schemaError{{msg: err.Error()}}
	}
	var out []schemaError
	seen := map[string]bool{}
	add := func(e schemaError) {
		key := strings.Join(e.loc, "/") + "\x00" + e.msg
		if !seen[key] {
			seen[key] = true
			out = append(out, e)
		}
	}
	var visit func(e *jsonschema.ValidationError)
	visit = func(e *jsonschema.ValidationError) {
		switch k := e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
			if len(e.Causes) > 0 {
				var branches []string
				for _, c := range leavesOf(e) {
					rel := strings.Join(c.InstanceLocation[min(len(e.InstanceLocation), len(c.InstanceLocation)):], "/")
					m := c.ErrorKind.LocalizedString(printer)
					if rel != "" {
						m = "/" + rel + ": " + m
					}
					if !slices.Contains(branches, m) {
						branches = append(branches, m)
					}
				}
				add(schemaError{loc: slices.Clone(e.InstanceLocation), msg: fmt.Sprintf("%s (%s)", e.ErrorKind.LocalizedString(printer), strings.Join(branches, " | "))})
				return
			}
		case *kind.PropertyNames:
			loc := findKey(instance, k.Property)
			msg := fmt.Sprintf("property name %q is not allowed here", k.Property)
			for _, c := range leavesOf(e) {
				if c != e {
					msg += ": " + c.ErrorKind.LocalizedString(printer)
				}
			}
			add(schemaError{loc: loc, msg: msg})
			return
		}
		if len(e.Causes) == 0 {
			add(schemaError{loc: slices.Clone(e.InstanceLocation), msg: e.ErrorKind.LocalizedString(printer)})
			return
		}
		for _, c := range e.Causes {
			visit(c)
		}
	}
	visit(ve)
	return out
}

func leavesOf(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leavesOf(c)...)
	}
	return out
}

// findKey returns the location of the first object holding key (the key
// included), depth first in key order, or nil.
func findKey(v any, key string) []string {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t[key]; ok {
			return []string{key}
		}
		for _, k := range sortedKeys(t) {
			if loc := findKey(t[k], key); loc != nil {
				return append([]string{k}, loc...)
			}
		}
	case []any:
		for i, e := range t {
			if loc := findKey(e, key); loc != nil {
				return append([]string{fmt.Sprint(i)}, loc...)
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// decodeJSON decodes one JSON document for the validator (numbers as
// json.Number), refusing trailing data.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON document")
	}
	return v, nil
}

// compileDocument compiles doc (a decoded JSON Schema) as draft 2020-12
// under a private URL; fragment selects a subschema ("" for the root).
func compileDocument(doc any, fragment string) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mem://values.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url + fragment)
}
