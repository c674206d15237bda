package packagereconciler

import (
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/operator/requirements"
	"cozystack.io/platform/internal/status"
)

var platform = requirements.Platform{Version: "1.0.0", Properties: []string{"network.stableVMAddress"}}

// source returns a PackageSource serving catalog name with one variant
// "default" of comps, depending on catalogs deps.
func source(name string, deps []string, comps ...v1alpha1.PackageComponent) *v1alpha1.PackageSource {
	ps := &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ps.Status.Artifact = &v1alpha1.ArtifactStatus{Digest: "sha256:m", Revision: "1.0.0@sha256:m"}
	for _, c := range comps {
		ps.Status.Artifact.Charts = append(ps.Status.Artifact.Charts, v1alpha1.ChartArtifact{Path: c.Chart, Digest: "sha256:" + c.Name})
	}
	ps.Status.Catalog = &v1alpha1.CatalogInfo{Name: name, Version: "1.0.0", MinPlatformVersion: "1.0.0"}
	ps.Status.Variants = []v1alpha1.PackageVariant{{Name: "default", DependsOn: deps, Components: comps}}
	ps.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonArtifactReady}}
	return ps
}

func comp(name string, deps ...string) v1alpha1.PackageComponent {
	return v1alpha1.PackageComponent{Name: name, Chart: "charts/" + name, Namespace: "ns-" + name, DependsOn: deps}
}

func pkgOf(name, src string) *v1alpha1.Package {
	return &v1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.PackageSpec{SourceRef: v1alpha1.PackageSourceReference{Name: src}}}
}

func TestNewViewRefusals(t *testing.T) {
	priv := comp("op")
	priv.Privileged = true
	tests := []struct {
		name   string
		pkg    func() *v1alpha1.Package
		src    *v1alpha1.PackageSource
		reason string
		kind   status.State
		msg    []string
	}{
		{"source missing", func() *v1alpha1.Package { return pkgOf("p", "gone") }, nil,
			v1alpha1.ReasonSourceMissing, status.StateStalled, []string{`PackageSource "gone" does not exist`, "kept"}},
		{"source not ready", func() *v1alpha1.Package { return pkgOf("p", "s") },
			&v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: "s"}},
			v1alpha1.ReasonSourceNotReady, status.StateProgressing, []string{"has not served a revision"}},
		{"source refused its revision", func() *v1alpha1.Package { return pkgOf("p", "s") },
			func() *v1alpha1.PackageSource {
				ps := source("s", nil, comp("a"))
				ps.Status.Conditions[0].Status, ps.Status.Conditions[0].Reason, ps.Status.Conditions[0].Message = metav1.ConditionFalse, v1alpha1.ReasonConflict, "the definitions conflict"
				return ps
			}(), v1alpha1.ReasonSourceNotReady, status.StateProgressing, []string{`PackageSource "s" is not Ready (Ready=False Conflict: the definitions conflict)`, "nothing is installed from it"}},
		{"variant missing", func() *v1alpha1.Package { p := pkgOf("p", "s"); p.Spec.Variant = "big"; return p },
			source("s", nil, comp("a")), v1alpha1.ReasonVariantMissing, status.StateStalled, []string{`"big"`, "available: default"}},
		{"component missing", func() *v1alpha1.Package {
			p := pkgOf("p", "s")
			p.Spec.Components = map[string]v1alpha1.PackageComponentSettings{"nope": {}}
			return p
		}, source("s", nil, comp("a")), v1alpha1.ReasonComponentMissing, status.StateStalled, []string{`spec.components["nope"]`, "its components: a"}},
		{"an application named as a component", func() *v1alpha1.Package {
			p := pkgOf("p", "s")
			p.Spec.Components = map[string]v1alpha1.PackageComponentSettings{"pg": {}}
			return p
		}, withApp(source("s", nil, comp("a")), "pg"), v1alpha1.ReasonComponentMissing, status.StateStalled,
			[]string{`spec.components["pg"]: pg is an application of catalog s`, "never a Package", "components: a"}},
		{"enabled depends on disabled", func() *v1alpha1.Package {
			p := pkgOf("p", "s")
			p.Spec.Components = map[string]v1alpha1.PackageComponentSettings{"a": {Enabled: ptr.To(false)}}
			return p
		}, source("s", nil, comp("a"), comp("b", "a")), v1alpha1.ReasonDependencyNotReady, status.StateStalled, []string{"component b depends on component a"}},
		{"privileged without opt-in", func() *v1alpha1.Package { return pkgOf("p", "s") },
			source("s", nil, priv, comp("b")), v1alpha1.ReasonPrivilegeNotAllowed, status.StateStalled, []string{"components op are privileged", "spec.allowPrivileged: true"}},
		{"requirements", func() *v1alpha1.Package { return pkgOf("p", "s") },
			func() *v1alpha1.PackageSource {
				s := source("s", nil, comp("a"))
				s.Status.Catalog.MinPlatformVersion = "2.0.0"
				return s
			}(), v1alpha1.ReasonRequirementsNotMet, status.StateStalled, []string{"2.0.0 or newer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, res := newView(tt.pkg(), tt.src, platform)
			if v != nil || res == nil {
				t.Fatalf("newView accepted it: %+v", v)
			}
			if res.Reason != tt.reason || res.State != tt.kind {
				t.Errorf("result %s/%d, want %s/%d", res.Reason, res.State, tt.reason, tt.kind)
			}
			for _, m := range tt.msg {
				if !strings.Contains(res.Message, m) {
					t.Errorf("message %q lacks %q", res.Message, m)
				}
			}
		})
	}
}

// withApp adds an application chart to s's status, as the operator copies
// it from the catalog.
func withApp(s *v1alpha1.PackageSource, name string) *v1alpha1.PackageSource {
	s.Status.Applications = append(s.Status.Applications, v1alpha1.PackageApplication{Name: name, Chart: "charts/" + name})
	s.Status.Artifact.Charts = append(s.Status.Artifact.Charts, v1alpha1.ChartArtifact{Path: "charts/" + name, Digest: "sha256:" + name})
	return s
}

// Applications are published, never installed: the plan holds the
// variant's components only.
func TestPlanSkipsApplications(t *testing.T) {
	v := mustView(t, pkgOf("p", "s"), withApp(source("s", nil, comp("a"), comp("b", "a")), "pg"))
	pl, res := newPlan(v, map[string]*view{"p": v})
	if res != nil {
		t.Fatalf("refused: %+v", res)
	}
	var got []string
	for _, c := range pl.components {
		got = append(got, c.Name)
	}
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("planned %v, want the components a,b and not the application pg", got)
	}
}

func TestNewViewDisabledAndPrivileged(t *testing.T) {
	priv := comp("op")
	priv.Privileged = true
	p := pkgOf("p", "s")
	p.Spec.AllowPrivileged = true
	p.Spec.Components = map[string]v1alpha1.PackageComponentSettings{"b": {Enabled: ptr.To(false)}}
	v, res := newView(p, source("s", nil, priv, comp("b")), platform)
	if res != nil {
		t.Fatalf("refused: %+v", res)
	}
	if len(v.enabled) != 1 || v.enabled[0].Name != "op" {
		t.Errorf("enabled = %+v, want only op", v.enabled)
	}
}

func mustView(t *testing.T, p *v1alpha1.Package, s *v1alpha1.PackageSource) *view {
	t.Helper()
	v, res := newView(p, s, platform)
	if res != nil {
		t.Fatalf("view of %s: %+v", p.Name, res)
	}
	return v
}

func TestNewPlanDependencies(t *testing.T) {
	base := mustView(t, pkgOf("base", "base-src"), source("base", nil, comp("db"), comp("cache")))
	app := mustView(t, pkgOf("app", "app-src"), source("app", []string{"base"}, comp("api"), comp("web", "api")))
	views := map[string]*view{"base": base, "app": app}
	pl, res := newPlan(app, views)
	if res != nil {
		t.Fatalf("refused: %+v", res)
	}
	byName := map[string]plannedComponent{}
	for _, c := range pl.components {
		byName[c.Name] = c
	}
	catalogDeps := []helmv2.DependencyReference{
		{Name: names.HelmRelease("base", "db"), Namespace: "ns-db"},
		{Name: names.HelmRelease("base", "cache"), Namespace: "ns-cache"},
	}
	for _, d := range catalogDeps {
		for _, c := range []string{"api", "web"} {
			if !containsDep(byName[c].DependsOn, d) {
				t.Errorf("%s.dependsOn %+v lacks catalog dependency %+v", c, byName[c].DependsOn, d)
			}
		}
	}
	if !containsDep(byName["web"].DependsOn, helmv2.DependencyReference{Name: names.HelmRelease("app", "api"), Namespace: "ns-api"}) {
		t.Errorf("web.dependsOn %+v lacks component api", byName["web"].DependsOn)
	}
	if byName["web"].Release != names.HelmRelease("app", "web") || byName["web"].ChartDigest != "sha256:web" {
		t.Errorf("web planned as %+v", byName["web"])
	}
}

func TestNewPlanMissingCatalogAndCycle(t *testing.T) {
	app := mustView(t, pkgOf("app", "s"), source("app", []string{"base"}, comp("api")))
	if _, res := newPlan(app, map[string]*view{"app": app}); res == nil || res.Reason != v1alpha1.ReasonDependencyNotReady ||
		!strings.Contains(res.Message, "catalog base, which no Package installs") {
		t.Errorf("missing catalog: %+v", res)
	}

	a := mustView(t, pkgOf("a", "sa"), source("cat-a", []string{"cat-b"}, comp("x")))
	b := mustView(t, pkgOf("b", "sb"), source("cat-b", []string{"cat-a"}, comp("y")))
	_, res := newPlan(a, map[string]*view{"a": a, "b": b})
	if res == nil || res.Reason != v1alpha1.ReasonDependencyCycle || !strings.Contains(res.Message, "a/x → b/y → a/x") {
		t.Errorf("cycle: %+v", res)
	}
}

func TestNewPlanHold(t *testing.T) {
	p := pkgOf("p", "s")
	p.Spec.Version = "0.9.0"
	v := mustView(t, p, source("s", nil, comp("a")))
	pl, res := newPlan(v, map[string]*view{"p": v})
	if res != nil || !pl.held {
		t.Errorf("pin 0.9.0 against 1.0.0: held=%v res=%+v", pl != nil && pl.held, res)
	}
}

func TestBuildValuesLayers(t *testing.T) {
	c := comp("a")
	c.Values = &apiextensionsv1.JSON{Raw: []byte(`{"b":"catalog"}`)}
	p := pkgOf("p", "s")
	p.Spec.Components = map[string]v1alpha1.PackageComponentSettings{"a": {Values: &apiextensionsv1.JSON{Raw: []byte(`{"d":"package"}`)}}}
	v := mustView(t, p, source("s", nil, c))
	pl, res := newPlan(v, map[string]*view{"p": v})
	if res != nil {
		t.Fatal(res)
	}
	for _, tenant := range []bool{false, true} {
		d := build(pl, pl.components[0], tenant)
		vf := d.release.Spec.ValuesFrom
		if len(vf) != 2 || vf[0].Name != names.CatalogValues("p", "a") || vf[1].Name != v1alpha1.ValuesName || vf[1].Optional == tenant {
			t.Errorf("tenant=%v: valuesFrom %+v: want catalog values, then K2 (optional only outside tenant namespaces)", tenant, vf)
		}
		if d.values.Data[v1alpha1.ValuesKey] != "b: catalog\n" || d.values.Labels[v1alpha1.LabelFluxWatch] != v1alpha1.FluxWatchEnabled {
			t.Errorf("catalog values ConfigMap %+v", d.values)
		}
		if string(d.release.Spec.Values.Raw) != `{"d":"package"}` {
			t.Errorf("spec.values %s, want the Package's", d.release.Spec.Values.Raw)
		}
		if !d.release.Spec.Install.DisableTakeOwnership || !d.release.Spec.Upgrade.DisableTakeOwnership {
			t.Error("take-ownership must be disabled")
		}
	}
	// Without catalog values there is no catalog ConfigMap.
	v2 := mustView(t, pkgOf("q", "s"), source("s", nil, comp("a")))
	pl2, _ := newPlan(v2, map[string]*view{"q": v2})
	if d := build(pl2, pl2.components[0], false); d.values != nil || len(d.release.Spec.ValuesFrom) != 1 {
		t.Errorf("no catalog values: got ConfigMap %v, valuesFrom %+v", d.values, d.release.Spec.ValuesFrom)
	}
}

func containsDep(deps []helmv2.DependencyReference, d helmv2.DependencyReference) bool {
	for _, x := range deps {
		if x == d {
			return true
		}
	}
	return false
}
