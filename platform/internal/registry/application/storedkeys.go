package application

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/warning"

	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/platform/internal/appschema"
)

// The platform never drops a value a tenant stored because the kind's
// schema no longer declares its key (contract K4, "Stored values",
// contracts/schemas/v1alpha1/k4-values.md): reads show it, and a write
// still carrying it is refused (validateSpec). Rewriting it behind the
// tenant would make the stored object diverge from the manifest the
// tenant keeps, and a rename map would be a second schema language.

// storedKeyError is the 422 cause for u, a field app's stored spec holds
// that kind k's schema no longer declares and the request still carries:
// it names the field, the definition, and the three ways out.
func storedKeyError(k *appkinds.Kind, app *unstructured.Unstructured, u appschema.UnknownField) *field.Error {
	var value any = field.OmitValueType{}
	switch u.Value.(type) {
	case map[string]any, []any:
	default:
		value = u.Value
	}
	drop := "setting it to null in this request"
	if patch := nullPatch(u.Keys); patch != "" {
		drop += fmt.Sprintf(" (kubectl patch %s %s -n %s --type merge -p '%s')", k.Singular, app.GetName(), app.GetNamespace(), patch)
	}
	return field.Invalid(u.Path, value, fmt.Sprintf(
		"stored in this %s, but the current schema of the kind (%s) no longer declares it, and the platform never drops a stored value on its own: drop it knowingly by %s, move its value to the key that replaced it in the same request, or ask the catalog's author to keep the key one more version with \"deprecated\": true (contracts/schemas/v1alpha1/k4-values.md, \"Stored values\")",
		k.Kind, definitionRevision(k), drop))
}

// definitionRevision names the ApplicationDefinition revision kind k was
// compiled from, and its catalog when a PackageSource ships it.
func definitionRevision(k *appkinds.Kind) string {
	s := fmt.Sprintf("ApplicationDefinition %s, generation %d", k.Definition, k.Generation)
	if k.Release.Catalog != "" {
		s += ", PackageSource " + k.Release.Catalog
	}
	return s
}

// nullPatch is the JSON merge patch that sets the field at keys (below
// spec) to null, or "" when no merge patch names it (an array on the way)
// or it does not fit in a single-quoted shell word.
func nullPatch(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	var v any
	for i := len(keys) - 1; i >= 0; i-- {
		v = map[string]any{keys[i]: v}
	}
	raw, err := json.Marshal(map[string]any{"spec": v})
	if err != nil || strings.Contains(string(raw), "'") {
		return ""
	}
	return string(raw)
}

// warnStoredKeys adds a Warning header per field of app's spec that kind
// k's schema no longer declares, so a get shows why the next write that
// keeps it will be refused. Lists and watches show the fields without a
// warning (one header per item would flood the client).
func warnStoredKeys(ctx context.Context, k *appkinds.Kind, app *unstructured.Unstructured) {
	spec, _ := app.Object["spec"].(map[string]any)
	for _, p := range k.Schema.UnknownFields(spec) {
		warning.AddWarning(ctx, "", fmt.Sprintf(
			"%s is stored, but the current schema of %s (%s) no longer declares it: a write that keeps it is refused; set it to null or move its value to the key that replaced it (contracts/schemas/v1alpha1/k4-values.md, \"Stored values\")",
			p, k.Kind, definitionRevision(k)))
	}
}
