package charttest

// The injection test: no string a tenant writes adds an object to its
// release. From a chart's values.schema.json, every string field and every
// free map key gets payloads that end the current manifest ("\n---\n")
// and start another object; the chart is rendered with and without the
// schema's validation, and the release must hold the same objects as
// with a harmless value.

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

// Payload is a string the injection test writes into a field or a map
// key.
type Payload struct {
	// Name says which context it breaks out of, for messages.
	Name  string
	Value string
}

// payload closes the context with prefix, ends the manifest and starts
// a ConfigMap kube-system/injected whose last key is a block scalar
// (`rest: |1`) that swallows what the template prints after the value:
// the rest of its line and every following line indented by at least one
// space. So the stream stays valid YAML whatever follows.
func payload(prefix, nl string) string {
	return strings.Join([]string{prefix, "---", "apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: injected",
		"  namespace: kube-system", "rest: |1", " "}, nl)
}

// Payloads break out of a plain value (with LF or CRLF line breaks), a
// map key, a double-quoted, single-quoted, flow mapping or flow sequence
// context, a comment or a block scalar, and start a ConfigMap
// kube-system/injected.
var Payloads = []Payload{
	{"newline", payload("x", "\n")},
	{"crlf", payload("x", "\r\n")},
	{"map-key", payload("x: y", "\n")},
	{"double-quote", payload("x\"", "\n")},
	{"single-quote", payload("x'", "\n")},
	{"flow-mapping", payload("x}", "\n")},
	{"flow-sequence", payload("x]", "\n")},
}

// Target is a place of a values schema where a tenant writes a string: a
// field whose schema admits a string, or the keys of a map.
type Target struct {
	// Path leads to the field, or to the map for a key: property names,
	// "*" for a map's value, "[]" for an array's item.
	Path []string
	// Key is true for the keys of the map at Path.
	Key bool
}

// String renders t as users.*.password, disks[].name or
// resourceQuotas.<key>.
func (t Target) String() string {
	var b strings.Builder
	for _, p := range t.Path {
		if p != "[]" && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	if t.Key {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString("<key>")
	}
	return b.String()
}

// StringTargets returns every Target of a values schema, sorted by
// String, leaving out the ReservedKeys. It follows properties,
// patternProperties and additionalProperties (a map: its keys and its
// values), items and prefixItems, and the branches of anyOf, oneOf and
// allOf. A schema admits a string when its type is or includes "string",
// or it has no type and describes no object or array.
func StringTargets(schema map[string]any) []Target {
	seen := map[string]Target{}
	var walk func(s any, path []string, depth int)
	walk = func(s any, path []string, depth int) {
		m, ok := s.(map[string]any)
		if !ok || depth > 32 {
			return
		}
		if admitsString(m) {
			t := Target{Path: slices.Clone(path)}
			seen[t.String()] = t
		}
		props, _ := m["properties"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if len(path) == 0 && slices.Contains(ReservedKeys, name) {
				continue
			}
			walk(props[name], append(slices.Clone(path), name), depth+1)
		}
		isMap := false
		if ap, ok := m["additionalProperties"].(map[string]any); ok {
			isMap = true
			walk(ap, append(slices.Clone(path), "*"), depth+1)
		}
		pp, _ := m["patternProperties"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(pp)) {
			isMap = true
			walk(pp[k], append(slices.Clone(path), "*"), depth+1)
		}
		if isMap {
			t := Target{Path: slices.Clone(path), Key: true}
			seen[t.String()] = t
		}
		walk(m["items"], append(slices.Clone(path), "[]"), depth+1)
		if l, ok := m["prefixItems"].([]any); ok {
			for _, it := range l {
				walk(it, append(slices.Clone(path), "[]"), depth+1)
			}
		}
		for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
			if l, ok := m[kw].([]any); ok {
				for _, b := range l {
					walk(b, path, depth+1)
				}
			}
		}
	}
	walk(schema, nil, 0)
	out := make([]Target, 0, len(seen))
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, seen[k])
	}
	return out
}

func admitsString(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "string"
	case []any:
		return slices.Contains(t, any("string"))
	}
	for _, kw := range []string{"properties", "additionalProperties", "patternProperties", "items", "prefixItems", "anyOf", "oneOf", "allOf", "enum", "const"} {
		if _, ok := m[kw]; ok {
			return false
		}
	}
	return true
}

// ObjectID identifies an object of a release.
type ObjectID struct {
	APIVersion, Kind, Namespace, Name string
}

func (o ObjectID) String() string {
	ns := o.Namespace
	if ns == "" {
		ns = "(release namespace)"
	}
	return fmt.Sprintf("%s %s %s/%s", o.APIVersion, o.Kind, ns, o.Name)
}

// ReleaseObjects returns the objects a render installs, as Helm's install
// reads them: partials (_*) and NOTES.txt left out, each template's
// output split at "---" lines (releaseutil.SortManifests), hooks
// included. A document that does not parse is an error, as it fails the
// install.
func ReleaseObjects(out map[string]string) ([]ObjectID, error) {
	files := map[string]string{}
	for k, v := range out {
		if !strings.HasSuffix(k, "NOTES.txt") {
			files[k] = v
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	docs := make([]string, 0, len(hooks)+len(manifests))
	for _, h := range hooks {
		docs = append(docs, h.Manifest)
	}
	for _, m := range manifests {
		docs = append(docs, m.Content)
	}
	var ids []ObjectID
	for _, d := range docs {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
			return nil, err
		}
		if obj.Kind == "" && obj.APIVersion == "" {
			continue
		}
		ids = append(ids, ObjectID{obj.APIVersion, obj.Kind, obj.Metadata.Namespace, obj.Metadata.Name})
	}
	slices.SortFunc(ids, func(a, b ObjectID) int { return strings.Compare(a.String(), b.String()) })
	return ids, nil
}

// RenderUnvalidated is Render without the values.schema.json validation:
// what the templates themselves make of values the schema would refuse.
func RenderUnvalidated(c *chart.Chart, name string, values map[string]any) (map[string]string, error) {
	if err := chartutil.ProcessDependenciesWithMerge(c, values); err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValuesWithSchemaValidation(c, values, chartutil.ReleaseOptions{Name: name, Namespace: Namespace, IsInstall: true}, chartutil.DefaultCapabilities, true)
	if err != nil {
		return nil, err
	}
	return engine.Render(c, vals)
}

// InjectionResult is one render of a payload.
type InjectionResult struct {
	Target Target
	// Base is the value case the payload was written into.
	Base    string
	Payload string
	// Validated is true for a render with values.schema.json validation.
	Validated bool
	// Err is why the render (or reading its objects) failed: for a
	// validated render mostly the schema's refusal. nil when it rendered.
	Err error
	// Appeared and Vanished are the objects the release holds beyond, and
	// short of, the baseline's (the same values with a harmless string
	// in place of the payload; names compared with the payload replaced
	// by that string).
	Appeared, Vanished []ObjectID
}

// Changed is true when the payload changed the release's objects.
func (r InjectionResult) Changed() bool { return len(r.Appeared)+len(r.Vanished) > 0 }

// InjectionCheck is the outcome of CheckInjection for one target.
type InjectionCheck struct {
	Target Target
	// Base is the value case the payloads were written into.
	Base string
	// Baseline is why the baseline (the case with a harmless string at
	// Target) did not render with the schema's validation; the target was
	// not checked in that case. nil when it rendered.
	Baseline error
	Results  []InjectionResult
}

// CheckInjection writes every Payload into every StringTargets of the
// values schema of the chart in dir (release <app>-<case>, as
// RenderCase), rendering with and without the schema's validation. Each
// target is written into every case of bases that has its container (the
// objects on its path), else into the first case, with the containers
// made from the schema (required properties, a default, an enum's first
// value, or a sample matching the pattern). A map key target adds an entry
// (a copy of an existing one) under the payload. The error is for a chart
// or schema that does not load.
func CheckInjection(dir, app string, bases []Case) ([]InjectionCheck, error) {
	ch, err := Load(dir)
	if err != nil {
		return nil, err
	}
	if len(ch.Schema) == 0 {
		return nil, fmt.Errorf("%s has no values.schema.json", dir)
	}
	var schema map[string]any
	if err := yaml.Unmarshal(ch.Schema, &schema); err != nil {
		return nil, fmt.Errorf("%s/values.schema.json: %w", dir, err)
	}
	if len(bases) == 0 {
		bases = []Case{{App: app, Name: "empty", Values: map[string]any{}}}
	}
	var out []InjectionCheck
	for _, t := range StringTargets(schema) {
		var use []Case
		for _, b := range bases {
			if hasContainer(b.Values, t) {
				use = append(use, b)
			}
		}
		if len(use) == 0 {
			use = bases[:1]
		}
		for _, b := range use {
			out = append(out, checkTarget(dir, schema, t, b))
		}
	}
	return out, nil
}

func checkTarget(dir string, schema map[string]any, t Target, b Case) InjectionCheck {
	check := InjectionCheck{Target: t, Base: b.Name}
	name := b.App + "-" + b.Name
	harmless := harmlessString(schema, b.Values, t)
	render := func(s string, validate bool) ([]ObjectID, error) {
		values, err := withString(schema, b.Values, t, s)
		if err != nil {
			return nil, err
		}
		c, err := Load(dir)
		if err != nil {
			return nil, err
		}
		var out map[string]string
		if validate {
			out, err = Render(c, name, WithK2(values))
		} else {
			out, err = RenderUnvalidated(c, name, WithK2(values))
		}
		if err != nil {
			return nil, err
		}
		objs, err := ReleaseObjects(out)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errManifest, err)
		}
		return objs, nil
	}
	baseline, err := render(harmless, true)
	if err != nil {
		check.Baseline = fmt.Errorf("with %s = %q: %w", t, harmless, err)
		return check
	}
	for _, p := range Payloads {
		for _, validate := range []bool{true, false} {
			r := InjectionResult{Target: t, Base: b.Name, Payload: p.Name, Validated: validate}
			objs, err := render(p.Value, validate)
			if err != nil {
				r.Err = err
			} else {
				for i := range objs {
					objs[i].Name = strings.ReplaceAll(objs[i].Name, p.Value, harmless)
					objs[i].Namespace = strings.ReplaceAll(objs[i].Namespace, p.Value, harmless)
				}
				r.Appeared, r.Vanished = difference(objs, baseline), difference(baseline, objs)
			}
			check.Results = append(check.Results, r)
		}
	}
	return check
}

// errManifest marks a render whose manifests Helm's install cannot read.
var errManifest = errors.New("the rendered manifests do not parse")

// difference returns the objects of a that b does not hold, each once.
func difference(a, b []ObjectID) []ObjectID {
	var out []ObjectID
	for _, o := range a {
		if !slices.Contains(b, o) && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// RunInjection runs CheckInjection, as a subtest per application of
// cases (the chart chartsDir/<App>) and per target, and fails on every
// payload that changed the release's objects, naming the chart, the
// field, the payload, the base case and the objects that appeared or
// vanished; a baseline that does not render fails too (add a value case
// that sets the field). Refusals and render errors pass and are logged:
// the schema refused, or the templates failed, rather than install
// another object.
func RunInjection(t *testing.T, chartsDir string, cases []Case) {
	t.Helper()
	byApp := map[string][]Case{}
	for _, c := range cases {
		byApp[c.App] = append(byApp[c.App], c)
	}
	for _, app := range slices.Sorted(maps.Keys(byApp)) {
		t.Run(app, func(t *testing.T) {
			checks, err := CheckInjection(filepath.Join(chartsDir, app), app, byApp[app])
			if err != nil {
				t.Fatal(err)
			}
			if len(checks) == 0 {
				t.Fatal("values.schema.json has no string field and no map: nothing to check")
			}
			for _, c := range checks {
				t.Run(c.Target.String()+"@"+c.Base, func(t *testing.T) {
					if c.Baseline != nil {
						t.Fatalf("chart %s, field %s: the baseline (case %s) does not render, so the field is not checked; add a value case under %s/%s that sets it: %v",
							app, c.Target, c.Base, CasesDir, app, c.Baseline)
					}
					counts := map[string]int{}
					for _, r := range c.Results {
						mode := "validated"
						if !r.Validated {
							mode = "unvalidated"
						}
						switch {
						case r.Err != nil && r.Validated && strings.Contains(r.Err.Error(), "values don't meet the specifications of the schema"):
							counts[mode+": refused by the schema"]++
						case errors.Is(r.Err, errManifest):
							counts[mode+": manifests do not parse"]++
						case r.Err != nil:
							counts[mode+": template error"]++
						case r.Changed():
							counts[mode+": CHANGED"]++
							t.Errorf("chart %s, field %s (case %s, payload %s, %s): the release's objects changed: appeared %v, vanished %v",
								app, r.Target, r.Base, r.Payload, mode, r.Appeared, r.Vanished)
						default:
							counts[mode+": same objects"]++
						}
					}
					var parts []string
					for _, k := range slices.Sorted(maps.Keys(counts)) {
						parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
					}
					t.Logf("%s (case %s): %s", c.Target, c.Base, strings.Join(parts, ", "))
				})
			}
		})
	}
}

// Building values for a target.

// hasContainer is true when values hold every object on t's path (the
// field itself may be missing).
func hasContainer(values map[string]any, t Target) bool {
	var cur any = values
	path := t.Path
	if !t.Key && len(path) > 0 {
		path = path[:len(path)-1]
	}
	for _, p := range path {
		switch p {
		case "*":
			m, ok := cur.(map[string]any)
			if !ok || len(m) == 0 {
				return false
			}
			cur = m[slices.Sorted(maps.Keys(m))[0]]
		case "[]":
			l, ok := cur.([]any)
			if !ok || len(l) == 0 {
				return false
			}
			cur = l[0]
		default:
			m, ok := cur.(map[string]any)
			if !ok {
				return false
			}
			if cur, ok = m[p]; !ok {
				return false
			}
		}
	}
	_, isMap := cur.(map[string]any)
	return isMap || !t.Key && len(t.Path) > 0 && t.Path[len(t.Path)-1] == "[]"
}

// withString returns a deep copy of values with s written at t: the
// field set to s, or an entry added to the map under the key s (a copy
// of the map's first entry, else one made from the schema). The objects
// on the way are made from the schema when missing; an array's first
// item is used.
func withString(schema, values map[string]any, t Target, s string) (map[string]any, error) {
	root := deepCopy(values).(map[string]any)
	var cur any = root
	sch := any(schema)
	set := func(v any) {} // writes the current node into its parent
	for i, p := range t.Path {
		last := i == len(t.Path)-1
		child := schemaStep(sch, p)
		switch p {
		case "*":
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: not a map at %s", t, strings.Join(t.Path[:i], "."))
			}
			var key string
			if len(m) > 0 {
				key = slices.Sorted(maps.Keys(m))[0]
			} else {
				key = sample(schemaMapAt(sch, "propertyNames"), nil)
			}
			if last && !t.Key {
				m[key] = s
				return root, nil
			}
			if m[key] == nil {
				m[key] = synthesize(child)
			}
			set = func(v any) { m[key] = v }
			cur = m[key]
		case "[]":
			l, _ := cur.([]any)
			if len(l) == 0 {
				l = []any{synthesize(child)}
				set(l)
			}
			if last && !t.Key {
				l[0] = s
				return root, nil
			}
			set = func(v any) { l[0] = v }
			cur = l[0]
		default:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: not an object at %s", t, strings.Join(t.Path[:i], "."))
			}
			if last && !t.Key {
				m[p] = s
				return root, nil
			}
			if m[p] == nil {
				m[p] = synthesize(child)
			}
			name := p
			set = func(v any) { m[name] = v }
			cur = m[p]
		}
		sch = child
	}
	if !t.Key {
		return nil, fmt.Errorf("%s: an empty path", t)
	}
	m, ok := cur.(map[string]any)
	if !ok {
		m = map[string]any{}
		set(m)
	}
	var entry any
	if len(m) > 0 {
		entry = deepCopy(m[slices.Sorted(maps.Keys(m))[0]])
	} else {
		entry = synthesize(schemaStep(sch, "*"))
	}
	m[s] = entry
	return root, nil
}

// harmlessString is the string the baseline writes at t: the value the
// case holds there, else one the schema accepts.
func harmlessString(schema, values map[string]any, t Target) string {
	sch := any(schema)
	var cur any = values
	for _, p := range t.Path {
		sch = schemaStep(sch, p)
		switch p {
		case "*":
			if m, ok := cur.(map[string]any); ok && len(m) > 0 {
				cur = m[slices.Sorted(maps.Keys(m))[0]]
			} else {
				cur = nil
			}
		case "[]":
			if l, ok := cur.([]any); ok && len(l) > 0 {
				cur = l[0]
			} else {
				cur = nil
			}
		default:
			m, _ := cur.(map[string]any)
			cur = m[p]
		}
	}
	if t.Key {
		m, _ := cur.(map[string]any)
		return sample(schemaMapAt(sch, "propertyNames"), m)
	}
	switch v := cur.(type) {
	case string:
		return v
	case float64, int, int64:
		return fmt.Sprint(v)
	}
	return sample(stringBranch(sch), nil)
}

// schemaStep returns the schema of step p ("*", "[]" or a property) of s,
// looking into the branches of anyOf, oneOf and allOf.
func schemaStep(s any, p string) any {
	for _, b := range schemaBranches(s) {
		var next any
		switch p {
		case "*":
			next = b["additionalProperties"]
			if pp, _ := b["patternProperties"].(map[string]any); len(pp) > 0 {
				if _, ok := next.(map[string]any); !ok {
					next = pp[slices.Sorted(maps.Keys(pp))[0]]
				}
			}
		case "[]":
			next = b["items"]
		default:
			props, _ := b["properties"].(map[string]any)
			next = props[p]
		}
		if m, ok := next.(map[string]any); ok {
			return m
		}
	}
	return nil
}

func schemaBranches(s any) []map[string]any {
	m, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	out := []map[string]any{m}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if l, ok := m[kw].([]any); ok {
			for _, b := range l {
				out = append(out, schemaBranches(b)...)
			}
		}
	}
	return out
}

func schemaMapAt(s any, kw string) map[string]any {
	for _, b := range schemaBranches(s) {
		if m, ok := b[kw].(map[string]any); ok {
			return m
		}
	}
	return nil
}

// stringBranch returns the branch of s that admits a string.
func stringBranch(s any) map[string]any {
	for _, b := range schemaBranches(s) {
		if admitsString(b) || b["enum"] != nil {
			return b
		}
	}
	return nil
}

// synthesize makes the smallest value s accepts: an object with its
// required properties, an empty array, a scalar's default, enum value or
// sample.
func synthesize(s any) any {
	m, _ := s.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	if d, ok := m["default"]; ok {
		if _, isObj := d.(map[string]any); !isObj {
			if _, isList := d.([]any); !isList {
				return deepCopy(d)
			}
		}
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	switch t, _ := m["type"].(string); t {
	case "object":
		out := map[string]any{}
		req, _ := m["required"].([]any)
		for _, r := range req {
			if name, ok := r.(string); ok {
				out[name] = synthesize(schemaStep(m, name))
			}
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		if v, ok := m["minimum"]; ok {
			return v
		}
		return 1
	case "boolean":
		return false
	case "string":
		return sample(m, nil)
	}
	for _, b := range schemaBranches(m)[1:] {
		return synthesize(b)
	}
	return map[string]any{}
}

// samples are tried in order for a string the schema accepts.
var samples = []string{"inj", "x", "a1", "u1.medium", "1", "10Gi", "inj.example.org", "https://example.org/disk.img",
	"docker://example.org/disk:1", "10.0.0.0/24", "10.0.0.1", "nvidia.com/GPU", "inj-x"}

// sample returns a string s (a string schema, or propertyNames) accepts
// that is not a key of taken: the default, the first enum value, else
// the first of samples matching its pattern and lengths.
func sample(s map[string]any, taken map[string]any) string {
	ok := func(c string) bool {
		if _, dup := taken[c]; dup {
			return false
		}
		if s == nil {
			return true
		}
		if p, isStr := s["pattern"].(string); isStr {
			re, err := regexp.Compile(p)
			if err != nil || !re.MatchString(c) {
				return false
			}
		}
		if n, isNum := s["maxLength"].(float64); isNum && float64(len(c)) > n {
			return false
		}
		if n, isNum := s["minLength"].(float64); isNum && float64(len(c)) < n {
			return false
		}
		return true
	}
	if s != nil {
		if d, isStr := s["default"].(string); isStr && d != "" && ok(d) {
			return d
		}
		if e, isList := s["enum"].([]any); isList {
			for _, v := range e {
				if str, isStr := v.(string); isStr && ok(str) {
					return str
				}
			}
		}
	}
	for _, c := range samples {
		if ok(c) {
			return c
		}
	}
	return "inj"
}
