package conformance

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/schemas"
	"cozystack.io/contracts/valuesschema"
)

// PlatformKeys are the top-level values the platform adds to every
// release (K2): a values schema admits them, an openAPISchema leaves them
// out.
var PlatformKeys = []string{"_cluster", "_namespace"}

// ad is one ApplicationDefinition document being checked.
type ad struct {
	doc ADDocument
	pos positions
	// def is the decoded AD, nil when it did not decode.
	def *v1alpha1.ApplicationDefinition
	// schema is openAPISchema decoded, nil when empty or not JSON.
	schema map[string]any
}

// finding returns a finding about the AD at the field path segs.
func (a *ad) finding(rule string, sev Severity, segs []string, msg, fix string) Finding {
	return Finding{RuleID: rule, Severity: sev, File: a.doc.File, Line: a.pos.line(segs...), Path: fieldPath(segs...), Message: msg, Fix: fix}
}

// schemaFinding returns a finding about the openAPISchema location ptr
// (segments of a JSON pointer).
func (a *ad) schemaFinding(rule string, sev Severity, ptr []string, msg, fix string) Finding {
	segs := []string{"spec", "application", "openAPISchema"}
	f := a.finding(rule, sev, segs, msg, fix)
	f.Path = fieldPath(segs...) + pointer(ptr...)
	return f
}

func (a *ad) label() string {
	if a.def != nil && a.def.Spec.Application.Kind != "" {
		return a.def.Spec.Application.Kind
	}
	return a.doc.File
}

// adCheck holds what the K1 and K6 rules need.
type adCheck struct {
	contract string
	k1       *jsonschema.Schema
	meta     *jsonschema.Schema
}

func newADCheck(contract string) (*adCheck, error) {
	k1, err := schemas.Compile(schemas.Path(contract, schemas.K1ApplicationFile))
	if err != nil {
		return nil, err
	}
	meta, err := schemas.Compile(schemas.Path(contract, schemas.K1ApplicationFile) + schemas.K1ValuesMetaSchema)
	if err != nil {
		return nil, err
	}
	return &adCheck{contract: contract, k1: k1, meta: meta}, nil
}

// checkADs runs the K1 and K6 rules on the documents; cat and charts are
// the catalog's (nil for ADs outside a catalog).
func (c *adCheck) checkADs(docs []ADDocument, cat *artifact.Catalog, catPos positions, charts chartSet) []Finding {
	var out []Finding
	var ads []*ad
	for _, d := range docs {
		a := &ad{doc: d, pos: newPositions(d.Data, d.Line-1)}
		out = append(out, c.decode(a)...)
		ads = append(ads, a)
	}
	for _, a := range ads {
		if a.def == nil {
			continue
		}
		out = append(out, c.checkOpenAPISchema(a)...)
		out = append(out, checkDashboard(a)...)
	}
	out = append(out, checkDuplicates(ads)...)
	out = append(out, checkPrefixes(ads)...)
	if cat != nil {
		out = append(out, checkBinding(ads, cat, catPos, charts)...)
	}
	return out
}

var quotedField = regexp.MustCompile(`field "([^"]+)"`)

// decode decodes a strictly and validates it under the K1 schema.
func (c *adCheck) decode(a *ad) []Finding {
	const fix = "correct the ApplicationDefinition as the message says (k1-application.md)"
	js, err := yaml.YAMLToJSONStrict(a.doc.Data)
	if err != nil {
		return []Finding{a.finding("K1-decode", Error, nil, "not valid YAML: "+err.Error(), fix)}
	}
	def := &v1alpha1.ApplicationDefinition{}
	strictErrs, err := sigsjson.UnmarshalStrict(js, def, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return []Finding{a.finding("K1-decode", Error, nil, "does not decode as an ApplicationDefinition: "+err.Error(), fix)}
	}
	var out []Finding
	for _, e := range strictErrs {
		var segs []string
		if m := quotedField.FindStringSubmatch(e.Error()); m != nil {
			segs = splitFieldPath(m[1])
		}
		out = append(out, a.finding("K1-decode", Error, segs, e.Error(), "remove the field or fix its spelling (the fields: k1-application.schema.json)"))
	}
	if len(out) > 0 {
		return out
	}
	a.def = def
	inst, err := decodeJSON(js)
	if err != nil {
		return []Finding{a.finding("K1-decode", Error, nil, err.Error(), fix)}
	}
	if err := c.k1.Validate(inst); err != nil {
		for _, e := range schemaErrors(err, inst) {
			rule := "K1-schema"
			if len(e.loc) >= 2 && e.loc[0] == "spec" && e.loc[1] == "dashboard" {
				rule = "K6-dashboard"
			}
			out = append(out, a.finding(rule, Error, e.loc, e.msg, "change the field to what the contract allows (k1-application.schema.json, k6-dashboard.schema.json)"))
		}
	}
	if s := strings.TrimSpace(def.Spec.Application.OpenAPISchema); s != "" {
		if v, err := decodeJSON([]byte(s)); err == nil {
			a.schema, _ = v.(map[string]any)
		}
	}
	return out
}

// splitFieldPath splits "spec.release.labels[0].x" into segments.
func splitFieldPath(p string) []string {
	p = strings.NewReplacer("[", ".", "]", "").Replace(p)
	return strings.Split(strings.Trim(p, "."), ".")
}

// checkOpenAPISchema runs the rules on spec.application.openAPISchema.
func (c *adCheck) checkOpenAPISchema(a *ad) []Finding {
	text := strings.TrimSpace(a.def.Spec.Application.OpenAPISchema)
	if text == "" {
		return nil
	}
	doc, err := decodeJSON([]byte(text))
	if err != nil {
		return []Finding{a.schemaFinding("K1-openapi-schema", Error, nil, "not a JSON document: "+err.Error(), "write openAPISchema as one JSON object")}
	}
	if _, ok := doc.(map[string]any); !ok {
		return []Finding{a.schemaFinding("K1-openapi-schema", Error, nil, fmt.Sprintf("a JSON %T, not an object", doc), "write openAPISchema as one JSON object")}
	}
	var out []Finding
	if _, err := compileDocument(doc, ""); err != nil {
		out = append(out, a.schemaFinding("K1-openapi-schema", Error, nil, "does not compile as JSON Schema 2020-12: "+err.Error(), "fix the schema as the message says"))
		return out
	}
	if err := c.meta.Validate(doc); err != nil {
		for _, e := range schemaErrors(err, doc) {
			if strings.HasPrefix(e.msg, "property name ") {
				continue // unknown x-cozystack-* keywords: walkKeywords reports them where they are
			}
			out = append(out, a.schemaFinding("K1-openapi-schema", Error, e.loc, e.msg,
				"use the keywords of JSON Schema 2020-12 and the K1 extensions as k1-application.md describes them"))
		}
	}
	walkSchema(doc, nil, func(node map[string]any, ptr []string) {
		for _, k := range sortedKeys(node) {
			switch {
			case strings.HasPrefix(k, "x-cozystack-") && k != "x-cozystack-options" && k != "x-cozystack-widget" && k != "x-cozystack-host" && k != "x-cozystack-restore-only":
				out = append(out, a.schemaFinding("K1-openapi-schema", Error, append(slices.Clone(ptr), k),
					fmt.Sprintf("unknown extension keyword %s", k), "use x-cozystack-options, x-cozystack-widget, x-cozystack-host or x-cozystack-restore-only (k1-application.md), or remove it"))
			}
		}
	})
	// The application API publishes the schema as the kind's OpenAPI
	// (kubectl explain); one it cannot publish disables the kind
	// (Served=False, UnpublishableSchema).
	if _, err := valuesschema.OpenAPI(doc.(map[string]any)); err != nil {
		var oe *valuesschema.OpenAPIError
		var ptr []string
		if errors.As(err, &oe) {
			ptr = pointerSegments(oe.Pointer)
		}
		out = append(out, a.schemaFinding("K1-openapi-schema", Error, ptr, err.Error(),
			"write the schema in the keywords OpenAPI v3 carries, as k1-application.md (Published OpenAPI) lists them"))
		return append(out, checkDefaults(a, doc)...)
	}
	// The application API evaluates x-kubernetes-validations as
	// kube-apiserver does for CRDs; a rule that cannot run would disable
	// the kind (Served=False, InvalidSchema).
	if _, err := valuesschema.CompileRules(text); err != nil {
		out = append(out, a.schemaFinding("K1-cel-rule", Error, nil, err.Error(),
			"write the rule in the CEL of CRD validation rules (self, oldSelf for transition rules) on a schema node with a type, or remove it"))
	}
	out = append(out, checkDefaults(a, doc)...)
	return out
}

// checkDefaults validates every default against its own subschema.
func checkDefaults(a *ad, doc any) []Finding {
	var out []Finding
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	const url = "mem://openAPISchema.json"
	if err := comp.AddResource(url, doc); err != nil {
		return nil
	}
	walkSchema(doc, nil, func(node map[string]any, ptr []string) {
		def, ok := node["default"]
		if !ok {
			return
		}
		s, err := comp.Compile(url + pointer(ptr...))
		if err != nil {
			return
		}
		// The API server defaults inside a default it writes, as
		// Kubernetes does for CRDs: validate what it would store.
		def = valuesschema.DeepCopy(def)
		valuesschema.Default(node, def)
		if err := s.Validate(def); err != nil {
			var msgs []string
			for _, e := range schemaErrors(err, def) {
				loc := ""
				if len(e.loc) > 0 {
					loc = "/" + strings.Join(e.loc, "/") + ": "
				}
				msgs = append(msgs, loc+e.msg)
			}
			out = append(out, a.schemaFinding("K1-default", Error, append(slices.Clone(ptr), "default"),
				fmt.Sprintf("the default %s (with the defaults below it applied) is not valid under its own schema: %s", compactJSON(def), strings.Join(msgs, "; ")),
				"change the default, or the schema, so that the default validates: the API server writes defaults into every object that leaves the field out"))
		}
	})
	return out
}

// walkSchema calls fn for every subschema object of a JSON Schema
// document, with its location.
func walkSchema(v any, ptr []string, fn func(node map[string]any, ptr []string)) {
	node, ok := v.(map[string]any)
	if !ok {
		return
	}
	fn(node, ptr)
	at := func(seg ...string) []string { return append(slices.Clone(ptr), seg...) }
	for _, kw := range []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"} {
		if m, ok := node[kw].(map[string]any); ok {
			for _, k := range sortedKeys(m) {
				walkSchema(m[k], at(kw, k), fn)
			}
		}
	}
	for _, kw := range []string{"additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"} {
		walkSchema(node[kw], at(kw), fn)
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
		if l, ok := node[kw].([]any); ok {
			for i, e := range l {
				walkSchema(e, at(kw, fmt.Sprint(i)), fn)
			}
		}
	}
}

// checkDuplicates reports ADs sharing a name, kind or plural.
func checkDuplicates(ads []*ad) []Finding {
	var out []Finding
	type key struct{ what, value string }
	first := map[key]*ad{}
	for _, a := range ads {
		if a.def == nil {
			continue
		}
		app := a.def.Spec.Application
		for _, k := range []struct {
			key  key
			segs []string
		}{
			{key{"name", a.def.Name}, []string{"metadata", "name"}},
			{key{"kind", app.Kind}, []string{"spec", "application", "kind"}},
			{key{"plural", app.Plural}, []string{"spec", "application", "plural"}},
		} {
			if k.key.value == "" {
				continue
			}
			if prev, ok := first[k.key]; ok {
				out = append(out, a.finding("K1-duplicate", Error, k.segs,
					fmt.Sprintf("%s %q is also the %s of the ApplicationDefinition in %s:%d", k.key.what, k.key.value, k.key.what, prev.doc.File, prev.doc.Line),
					fmt.Sprintf("give each ApplicationDefinition its own %s: the API server serves only one of them", k.key.what)))
				continue
			}
			first[k.key] = a
		}
	}
	return out
}

// checkPrefixes reports release prefixes under which HelmRelease names of
// two kinds collide: an empty prefix, and a prefix that starts another.
func checkPrefixes(ads []*ad) []Finding {
	var out []Finding
	segs := []string{"spec", "release", "prefix"}
	for _, a := range ads {
		if a.def == nil {
			continue
		}
		p := a.def.Spec.Release.Prefix
		if p == "" {
			example := "an object of another kind whose <prefix><name> is the same"
			for _, b := range ads {
				if b != a && b.def != nil && b.def.Spec.Release.Prefix != "" {
					q := b.def.Spec.Release.Prefix
					example = fmt.Sprintf("%s %sx and %s x are both HelmRelease %sx", a.label(), q, b.label(), q)
					break
				}
			}
			out = append(out, a.finding("K1-release-prefix", Warning, segs,
				fmt.Sprintf("the prefix is empty: the HelmRelease of %s %s object is named after the object alone, so it collides with that of any kind in the namespace whose <prefix><name> is the same (%s; the second is refused)", article(a.label()), a.label(), example),
				fmt.Sprintf("give the kind its own prefix, e.g. %q", strings.ToLower(a.def.Spec.Application.Singular)+"-")))
			continue
		}
		for _, b := range ads {
			if b == a || b.def == nil || b.def.Spec.Release.Prefix == "" {
				continue
			}
			q := b.def.Spec.Release.Prefix
			if q == p && slices.Index(ads, b) > slices.Index(ads, a) || q != p && strings.HasPrefix(q, p) {
				rest := strings.TrimPrefix(q, p)
				out = append(out, a.finding("K1-release-prefix", Warning, segs,
					fmt.Sprintf("prefix %q starts the prefix %q of %s: %s %sx and %s x are both HelmRelease %sx (the second is refused)",
						p, q, b.label(), a.label(), rest, b.label(), q),
					"make neither prefix start the other, e.g. end each with a name no other kind's prefix continues"))
			}
		}
	}
	return out
}

// checkBinding checks a catalog's ADs against catalog.yaml and their
// charts.
func checkBinding(ads []*ad, cat *artifact.Catalog, catPos positions, charts chartSet) []Finding {
	var out []Finding
	const fix = "an AD of a catalog names its chart with release.source (the catalog's name) and release.component (an application of catalog.yaml whose kind is the AD's)"
	kinds := map[string]*ad{}
	undecoded := false
	for _, a := range ads {
		if a.def == nil {
			undecoded = true
			continue
		}
		spec := a.def.Spec
		kinds[spec.Application.Kind] = a
		if spec.Release.ChartRef != nil {
			out = append(out, a.finding("K1-catalog-binding", Error, []string{"spec", "release", "chartRef"},
				"the AD installs a chart from chartRef, not one of this catalog's applications: the catalog's artifact does not carry it", fix))
			continue
		}
		if spec.Release.Source != cat.Name {
			out = append(out, a.finding("K1-catalog-binding", Error, []string{"spec", "release", "source"},
				fmt.Sprintf("release.source is %q, not this catalog's name %q: the chart would come from another PackageSource", spec.Release.Source, cat.Name), fix))
		}
		app, ok := cat.Application(spec.Release.Component)
		if !ok {
			out = append(out, a.finding("K1-catalog-binding", Error, []string{"spec", "release", "component"},
				fmt.Sprintf("release.component %q is not an application of catalog.yaml: the platform publishes no chart for it", spec.Release.Component), fix))
			continue
		}
		if app.Kind != "" && app.Kind != spec.Application.Kind {
			out = append(out, a.finding("K1-catalog-binding", Error, []string{"spec", "release", "component"},
				fmt.Sprintf("application %s is for kind %s, this AD serves %s", app.Name, app.Kind, spec.Application.Kind), fix))
		}
		if !slices.Contains(cat.Provides.ApplicationKinds, spec.Application.Kind) {
			out = append(out, a.finding("K1-catalog-binding", Error, []string{"spec", "application", "kind"},
				fmt.Sprintf("kind %s is not in catalog.yaml provides.applicationKinds", spec.Application.Kind), "list the kind in provides.applicationKinds"))
		}
		if ch := charts.get(app.Chart); ch != nil && a.schema != nil {
			out = append(out, checkChartSchema(a, app.Chart, ch)...)
		}
	}
	for i, k := range cat.Provides.ApplicationKinds {
		if _, ok := kinds[k]; !ok && !undecoded { // an AD that did not decode may serve it
			out = append(out, Finding{RuleID: "K1-catalog-binding", Severity: Error, File: artifact.CatalogFile, Line: catPos.line("provides", "applicationKinds", fmt.Sprint(i)),
				Path: fmt.Sprintf("provides.applicationKinds[%d]", i), Message: fmt.Sprintf("the catalog provides kind %s but no ApplicationDefinition in %s/ serves it", k, ADDir),
				Fix: "add its ApplicationDefinition, or remove the kind from provides.applicationKinds"})
		}
	}
	return out
}

// checkChartSchema compares openAPISchema with the chart's values schema
// without the platform and dependency keys.
func checkChartSchema(a *ad, chartPath string, ch *loadedChart) []Finding {
	want, ok := ch.schemaDoc.(map[string]any)
	if !ok {
		return nil
	}
	want = valuesschema.DeepCopy(want).(map[string]any)
	if props, ok := want["properties"].(map[string]any); ok {
		for _, k := range append(slices.Clone(PlatformKeys), ch.dependencyKeys()...) {
			delete(props, k)
		}
	}
	got := valuesschema.DeepCopy(any(a.schema))
	if reflect.DeepEqual(normalizeNumbers(want), normalizeNumbers(got)) {
		return nil
	}
	diffs := schemaDiff(normalizeNumbers(want), normalizeNumbers(got), nil)
	const max = 5
	more := ""
	if len(diffs) > max {
		more = fmt.Sprintf(" and %d more", len(diffs)-max)
		diffs = diffs[:max]
	}
	return []Finding{a.schemaFinding("K1-chart-schema", Error, nil,
		fmt.Sprintf("openAPISchema differs from %s/values.schema.json without %s: at %s%s; the API would accept values Helm then refuses, or the reverse",
			chartPath, strings.Join(append(slices.Clone(PlatformKeys), ch.dependencyKeys()...), ", "), strings.Join(diffs, ", "), more),
		"generate openAPISchema from the chart's values.schema.json (drop _cluster, _namespace and the dependency keys)")}
}

// schemaDiff returns the JSON pointers at which a and b differ.
func schemaDiff(a, b any, ptr []string) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		var out []string
		keys := slices.Sorted(maps.Keys(am))
		for _, k := range slices.Sorted(maps.Keys(bm)) {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			out = append(out, schemaDiff(am[k], bm[k], append(slices.Clone(ptr), k))...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return []string{pointer(ptr...)}
}

// normalizeNumbers turns json.Number into their string form so that 1
// and 1.0 from two documents compare by text, and everything else as is.
func normalizeNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = normalizeNumbers(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = normalizeNumbers(e)
		}
		return l
	case fmt.Stringer:
		return t.String()
	default:
		return v
	}
}
