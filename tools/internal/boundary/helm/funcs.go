package helm

import "github.com/Masterminds/sprig/v3"

// builtins are text/template's own functions: text/template hands them to
// the parser itself, so a bare parse.Parse must be given them too.
var builtins = []string{
	"and", "call", "html", "index", "slice", "js", "len", "not", "or", "print",
	"printf", "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne",
}

// helmExtras are the functions Helm's engine adds to sprig's
// (helm.sh/helm/v3 pkg/engine/funcs.go), the late-bound ones included.
var helmExtras = []string{
	"toToml", "fromToml", "toYaml", "mustToYaml", "toYamlPretty", "fromYaml",
	"fromYamlArray", "toJson", "mustToJson", "fromJson", "fromJsonArray",
	"include", "tpl", "required", "lookup",
}

// stub stands for every function: parsing checks only that a name exists.
func stub(...any) (any, error) { return nil, nil }

// funcMap is the set of function names a Helm template may call: sprig's
// text functions without env and expandenv (Helm deletes those two), Helm's
// extras and text/template's builtins. A template calling anything else
// fails to parse here as it fails to render in Helm.
func funcMap() map[string]any {
	f := map[string]any(sprig.TxtFuncMap())
	delete(f, "env")
	delete(f, "expandenv")
	for _, name := range append(append([]string{}, helmExtras...), builtins...) {
		f[name] = stub
	}
	return f
}
