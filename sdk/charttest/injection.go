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
	"slices"
	"strings"
	"testing"

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
