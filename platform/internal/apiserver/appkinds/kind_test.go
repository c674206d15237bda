package appkinds

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/adfixtures"
)

func goodAD(name, kind, plural string) *v1alpha1.ApplicationDefinition {
	return &v1alpha1.ApplicationDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1000, 0))},
		Spec: v1alpha1.ApplicationDefinitionSpec{
			Application: v1alpha1.ApplicationDefinitionApplication{
				Kind: kind, Plural: plural, Singular: strings.ToLower(kind),
				OpenAPISchema: `{"type":"object","properties":{"replicas":{"type":"integer","default":1}}}`,
			},
			Release: v1alpha1.ApplicationDefinitionRelease{
				Prefix:   strings.ToLower(kind) + "-",
				ChartRef: &v1alpha1.ChartRef{Kind: "ExternalArtifact", Name: "chart", Namespace: "cozy-system"},
			},
		},
	}
}

// The corpus of bad ADs: each disables only itself with the stated reason.
func TestCompileRejectsBadADs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha1.ApplicationDefinition)
		reason string
		want   string
	}{
		{"invalid JSON schema", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Application.OpenAPISchema = `{"type":` },
			v1alpha1.ReasonInvalidSchema, "not valid JSON"},
		{"schema does not compile", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Application.OpenAPISchema = `{"type":"objekt"}` },
			v1alpha1.ReasonInvalidSchema, "does not compile"},
		{"schema with a bad pattern", func(a *v1alpha1.ApplicationDefinition) {
			a.Spec.Application.OpenAPISchema = `{"type":"object","properties":{"a":{"type":"string","pattern":"[z-a]"}}}`
		}, v1alpha1.ReasonInvalidSchema, "does not compile"},
		{"schema is an array", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Application.OpenAPISchema = `[]` },
			v1alpha1.ReasonInvalidSchema, "not a JSON object"},
		{"bad install timeout annotation", func(a *v1alpha1.ApplicationDefinition) {
			a.Annotations = map[string]string{v1alpha1.AnnotationHelmInstallTimeout: "fifteen minutes"}
		}, v1alpha1.ReasonInvalidAnnotation, "release.cozystack.io/helm-install-timeout"},
		{"negative upgrade timeout annotation", func(a *v1alpha1.ApplicationDefinition) {
			a.Annotations = map[string]string{v1alpha1.AnnotationHelmUpgradeTimeout: "-5m"}
		}, v1alpha1.ReasonInvalidAnnotation, "positive duration"},
		{"bad disable-wait annotation", func(a *v1alpha1.ApplicationDefinition) {
			a.Annotations = map[string]string{v1alpha1.AnnotationHelmInstallDisableWait: "yes please"}
		}, v1alpha1.ReasonInvalidAnnotation, "not a boolean"},
		{"prefix leaves no room", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Release.Prefix = strings.Repeat("p", 53) },
			v1alpha1.ReasonInvalidPrefix, "leaves no room"},
		{"prefix with upper case", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Release.Prefix = "Pg-" },
			v1alpha1.ReasonInvalidPrefix, "lowercase"},
		{"no chart", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Release.ChartRef = nil },
			v1alpha1.ReasonInvalidRelease, "chartRef, or source and component"},
		{"lowercase kind", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Application.Kind = "postgres" },
			v1alpha1.ReasonInvalidNames, "spec.application.kind"},
		{"plural with a dot", func(a *v1alpha1.ApplicationDefinition) { a.Spec.Application.Plural = "pg.sql" },
			v1alpha1.ReasonInvalidNames, "spec.application.plural"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ad := goodAD("pg", "Postgres", "postgreses")
			tc.mutate(ad)
			k, f := Compile(ad)
			if f == nil {
				t.Fatalf("Compile accepted the AD: %+v", k)
			}
			if f.Reason != tc.reason || !strings.Contains(f.Message, tc.want) {
				t.Errorf("failure = %s: %s; want reason %s with %q", f.Reason, f.Message, tc.reason, tc.want)
			}
		})
	}
}

func TestCompileRelease(t *testing.T) {
	ad := goodAD("pg", "Postgres", "postgreses")
	ad.Annotations = map[string]string{
		v1alpha1.AnnotationHelmInstallTimeout:     "15m",
		v1alpha1.AnnotationHelmUpgradeTimeout:     "20m",
		v1alpha1.AnnotationHelmInstallDisableWait: "true",
	}
	ad.Spec.Release.ChartRef = nil
	ad.Spec.Release.Source, ad.Spec.Release.Component = "acme.db", "postgres"
	k, f := Compile(ad)
	if f != nil {
		t.Fatal(f)
	}
	r := k.Release
	if r.InstallTimeout.Duration != 15*time.Minute || r.UpgradeTimeout.Duration != 20*time.Minute || !r.InstallDisableWait {
		t.Errorf("annotations not applied: %+v", r)
	}
	if r.ChartRef.Kind != "ExternalArtifact" || r.ChartRef.Namespace != v1alpha1.SystemNamespace ||
		r.ChartRef.Name != v1alpha1.ComponentArtifactName("acme.db", "postgres") {
		t.Errorf("derived chartRef = %+v", r.ChartRef)
	}
	if k.MaxNameLength != 53-len("postgres-") {
		t.Errorf("MaxNameLength = %d", k.MaxNameLength)
	}
	if errs := k.ValidateName(strings.Repeat("a", k.MaxNameLength+1)); len(errs) != 1 || !strings.Contains(errs[0], "no more than 44 characters") {
		t.Errorf("ValidateName of a too-long name = %v", errs)
	}
	if errs := k.ValidateName("1abc"); len(errs) == 0 {
		t.Error("ValidateName accepted a name starting with a digit (not DNS-1035)")
	}
	if n, ok := k.ApplicationName(k.HelmReleaseName("main")); !ok || n != "main" {
		t.Errorf("ApplicationName(HelmReleaseName(main)) = %q, %v", n, ok)
	}
	if _, ok := k.ApplicationName("other-main"); ok {
		t.Error("ApplicationName accepted a name without the prefix")
	}
}

func TestComponentArtifactNamesDoNotCollide(t *testing.T) {
	pairs := [][2]string{{"acme.web", "x"}, {"acme-web", "x"}, {"acme", "web.x"}, {"acme", "web-x"}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		n := v1alpha1.ComponentArtifactName(p[0], p[1])
		if other, ok := seen[n]; ok {
			t.Errorf("%v and %v both map to %s", p, other, n)
		}
		seen[n] = p
	}
}

func TestResolveConflictsAreDeterministic(t *testing.T) {
	older := goodAD("a-first", "Postgres", "postgreses")
	newer := goodAD("b-second", "Postgres2", "postgreses")
	newer.CreationTimestamp = metav1.NewTime(time.Unix(2000, 0))
	sameKind := goodAD("c-third", "Postgres", "pgs")
	sameKind.Spec.Application.Singular = "pg"
	sameKind.CreationTimestamp = metav1.NewTime(time.Unix(3000, 0))
	broken := goodAD("d-broken", "Redis", "redises")
	broken.Spec.Application.OpenAPISchema = "{"
	good := goodAD("e-good", "Redis", "redises")

	for _, order := range [][]*v1alpha1.ApplicationDefinition{
		{older, newer, sameKind, broken, good},
		{good, broken, sameKind, newer, older},
	} {
		set := Resolve(order)
		if k := set.ByPlural["postgreses"]; k == nil || k.Definition != "a-first" {
			t.Errorf("postgreses served by %v, want a-first", k)
		}
		if f := set.Failures["b-second"]; f == nil || f.Reason != v1alpha1.ReasonPluralConflict || !strings.Contains(f.Message, `"a-first"`) {
			t.Errorf("b-second failure = %v", f)
		}
		if f := set.Failures["c-third"]; f == nil || f.Reason != v1alpha1.ReasonKindConflict {
			t.Errorf("c-third failure = %v", f)
		}
		if f := set.Failures["d-broken"]; f == nil || f.Reason != v1alpha1.ReasonInvalidSchema {
			t.Errorf("d-broken failure = %v", f)
		}
		// A broken AD does not block a valid one with the same names.
		if k := set.ByPlural["redises"]; k == nil || k.Definition != "e-good" {
			t.Errorf("redises served by %v, want e-good", k)
		}
	}
}

// All 25 upstream ADs compile and are served together, with no conflict.
func TestResolveUpstreamADs(t *testing.T) {
	// Strict decoding: the Go types know every field of every upstream AD.
	ads := adfixtures.All(t)
	if len(ads) != 25 {
		t.Fatalf("found %d fixtures, want 25", len(ads))
	}
	set := Resolve(ads)
	for name, f := range set.Failures {
		t.Errorf("%s not served: %v", name, f)
	}
	if len(set.ByPlural) != 25 {
		t.Errorf("%d kinds served, want 25", len(set.ByPlural))
	}
	if k := set.ByPlural["tenants"]; k == nil || k.Release.InstallTimeout == nil || k.Release.InstallTimeout.Duration != 15*time.Minute {
		t.Errorf("tenants install timeout from the annotation = %+v", k)
	}
}

// A newcomer never takes a served name away, even when it sorts first by
// creation time and name (same-second timestamps are common).
func TestResolveKeepsTheIncumbent(t *testing.T) {
	served := goodAD("z-served", "Postgres", "postgreses")
	served.Status = v1alpha1.ApplicationDefinitionStatus{Resource: "postgreses", Conditions: []metav1.Condition{
		{Type: v1alpha1.ConditionServed, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonServed},
	}}
	newcomer := goodAD("a-newcomer", "Postgres", "postgreses")
	newcomer.CreationTimestamp = metav1.NewTime(time.Unix(1, 0)) // older, and sorts first by name
	set := Resolve([]*v1alpha1.ApplicationDefinition{newcomer, served})
	if k := set.ByPlural["postgreses"]; k == nil || k.Definition != "z-served" {
		t.Fatalf("postgreses served by %v, want the incumbent z-served", k)
	}
	if f := set.Failures["a-newcomer"]; f == nil || f.Reason != v1alpha1.ReasonPluralConflict {
		t.Errorf("newcomer failure = %v", f)
	}
}
