package adinstaller_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/install"
	"cozystack.io/platform/internal/operator/adinstaller"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/sdk/testenv"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// A real kube-apiserver: the guard, server-side apply and the pruning are
// its semantics.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

func ad(name, kind, plural string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cozystack.io/v1alpha1", "kind": "ApplicationDefinition",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"application": map[string]any{"kind": kind, "singular": strings.ToLower(kind), "plural": plural,
				"openAPISchema": `{"type":"object","additionalProperties":false,"properties":{"size":{"type":"integer","default":1}}}`},
			"release": map[string]any{"prefix": name + "-", "source": "acme", "component": name},
		},
	}}
}

func policy(name, plural string) (*unstructured.Unstructured, *unstructured.Unstructured) {
	vap := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"failurePolicy": "Fail",
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{"apps.cozystack.io"}, "apiVersions": []any{"v1alpha1"},
				"operations": []any{"CREATE"}, "resources": []any{plural},
			}}},
			"validations": []any{map[string]any{"expression": "size(object.metadata.name) <= 20"}},
		},
	}}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"policyName": name, "validationActions": []any{"Deny"}},
	}}
	return vap, binding
}

func get(t *testing.T, like *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(like.GroupVersionKind())
	err := env.Client.Get(context.Background(), client.ObjectKey{Name: like.GetName()}, u)
	return u, err
}

func TestInstall(t *testing.T) {
	testenv.Need(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := install.CRDs(ctx, env.Config, ""); err != nil {
		t.Fatal(err)
	}
	c := env.Client

	web, db := ad("web", "Web", "webs"), ad("db", "DB", "dbs")
	vap, binding := policy("web-names.acme.io", "webs")

	// 1. A fresh install applies everything, labelled and annotated.
	res, err := adinstaller.Install(ctx, c, "acme", []*unstructured.Unstructured{binding, vap, web, db})
	if err != nil {
		t.Fatal(err)
	}
	// Applied in kind order: ADs, then the policy, then its binding.
	want := []string{"ApplicationDefinition web", "ApplicationDefinition db", "ValidatingAdmissionPolicy web-names.acme.io", "ValidatingAdmissionPolicyBinding web-names.acme.io"}
	if !slices.Equal(res.Applied, want) {
		t.Errorf("applied %v, want %v", res.Applied, want)
	}
	for _, o := range []*unstructured.Unstructured{web, db, vap, binding} {
		got, err := get(t, o)
		if err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if got.GetLabels()[names.LabelPackageSource] != "acme" || got.GetAnnotations()[names.AnnotationPackageSource] != "acme" ||
			got.GetLabels()[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByOperator {
			t.Errorf("%s %s: labels %v annotations %v, want the source's", o.GetKind(), o.GetName(), got.GetLabels(), got.GetAnnotations())
		}
		// The kinds have no owner (deleting the source keeps them); a
		// policy is owned by the kind it matches, a binding by its policy.
		var wantOwner string
		switch o {
		case vap:
			wantOwner = "ApplicationDefinition/web"
		case binding:
			wantOwner = "ValidatingAdmissionPolicy/web-names.acme.io"
		}
		var owners []string
		for _, ref := range got.GetOwnerReferences() {
			owners = append(owners, ref.Kind+"/"+ref.Name)
		}
		if strings.Join(owners, ",") != wantOwner {
			t.Errorf("%s %s: owners %v, want %q", o.GetKind(), o.GetName(), owners, wantOwner)
		}
	}

	// 2. Installing the same revision again writes nothing.
	before, _ := get(t, web)
	if _, err := adinstaller.Install(ctx, c, "acme", []*unstructured.Unstructured{web, db, vap, binding}); err != nil {
		t.Fatal(err)
	}
	after, _ := get(t, web)
	if before.GetResourceVersion() != after.GetResourceVersion() {
		t.Errorf("a second install of the same revision changed ApplicationDefinition web (resourceVersion %s -> %s)", before.GetResourceVersion(), after.GetResourceVersion())
	}

	// 3. A hand-applied AD of the same name as one of another source's:
	// a conflict, and nothing of that revision is written.
	hand := ad("cache", "Cache", "caches")
	if err := c.Create(ctx, hand); err != nil {
		t.Fatal(err)
	}
	other := ad("queue", "Queue", "queues")
	_, err = adinstaller.Install(ctx, c, "other", []*unstructured.Unstructured{other, ad("cache", "Cache", "caches"), ad("web", "Web", "webs")})
	var conflict *adinstaller.ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("install over foreign objects: %v, want a ConflictError", err)
	}
	wantConflicts := []string{"ApplicationDefinition cache (not installed by a PackageSource)", "ApplicationDefinition web (PackageSource acme)"}
	if !slices.Equal(conflict.Objects, wantConflicts) {
		t.Errorf("conflicts %v, want %v", conflict.Objects, wantConflicts)
	}
	if _, err := get(t, other); !apierrors.IsNotFound(err) {
		t.Errorf("ApplicationDefinition queue: %v, want NotFound (a conflict applies nothing)", err)
	}

	// 3b. A definition of another name claiming a name acme's web holds
	// (its plural, singular or kind), or a policy on acme's plural: a
	// conflict naming the holder, and nothing is written.
	squat := ad("squat", "Squat", "squats")
	_ = unstructured.SetNestedField(squat.Object, "web", "spec", "application", "singular")
	_ = unstructured.SetNestedField(squat.Object, "Web", "spec", "application", "kind")
	decoy, _ := policy("decoy.other.io", "webs")
	_, err = adinstaller.Install(ctx, c, "other", []*unstructured.Unstructured{squat, decoy})
	if !errors.As(err, &conflict) {
		t.Fatalf("install of a squatting definition: %v, want a ConflictError", err)
	}
	wantConflicts = []string{
		`ApplicationDefinition squat (its kind web is held by ApplicationDefinition web of PackageSource acme)`,
		`ApplicationDefinition squat (its resource name "web" is held by ApplicationDefinition web of PackageSource acme)`,
		`ValidatingAdmissionPolicy decoy.other.io (it matches webs, the kind of ApplicationDefinition web of PackageSource acme)`,
	}
	if !slices.Equal(conflict.Objects, wantConflicts) {
		t.Errorf("conflicts %v, want %v", conflict.Objects, wantConflicts)
	}
	for _, o := range []*unstructured.Unstructured{squat, decoy} {
		if _, err := get(t, o); !apierrors.IsNotFound(err) {
			t.Errorf("%s %s: %v, want NotFound", o.GetKind(), o.GetName(), err)
		}
	}

	// 4. The next revision drops db and the policy: they are deleted; an
	// object with the source's label but another owner's annotation (a
	// copied label) is left alone.
	impostor := ad("impostor", "Impostor", "impostors")
	impostor.SetLabels(map[string]string{names.LabelPackageSource: "acme"})
	impostor.SetAnnotations(map[string]string{names.AnnotationPackageSource: "someone-else"})
	if err := c.Create(ctx, impostor); err != nil {
		t.Fatal(err)
	}
	res, err = adinstaller.Install(ctx, c, "acme", []*unstructured.Unstructured{web})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(res.Deleted)
	wantDeleted := []string{"ApplicationDefinition db", "ValidatingAdmissionPolicy web-names.acme.io", "ValidatingAdmissionPolicyBinding web-names.acme.io"}
	if !slices.Equal(res.Deleted, wantDeleted) {
		t.Errorf("deleted %v, want %v", res.Deleted, wantDeleted)
	}
	for _, o := range []*unstructured.Unstructured{db, vap, binding} {
		if _, err := get(t, o); !apierrors.IsNotFound(err) {
			t.Errorf("%s %s: %v, want NotFound after the revision dropped it", o.GetKind(), o.GetName(), err)
		}
	}
	for _, o := range []*unstructured.Unstructured{web, impostor, hand} {
		if _, err := get(t, o); err != nil {
			t.Errorf("%s %s: %v, want it kept", o.GetKind(), o.GetName(), err)
		}
	}

	// 5. A kind the operator does not install is refused before anything
	// is written.
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}}
	if _, err := adinstaller.Install(ctx, c, "acme", []*unstructured.Unstructured{ad("late", "Late", "lates"), cm}); err == nil || !strings.Contains(err.Error(), "not a kind the operator installs") {
		t.Errorf("install of a ConfigMap: %v, want a refusal", err)
	}
	if _, err := get(t, ad("late", "Late", "lates")); !apierrors.IsNotFound(err) {
		t.Errorf("ApplicationDefinition late: %v, want NotFound", err)
	}
}

// TestPolicyGoesWithItsKind (K1 "Who serves a kind",
// contracts/schemas/v1alpha1/k1-application.md): a policy lives as long as
// the kind it guards: deleting the ApplicationDefinition, however it goes,
// lets the garbage collector (kube-controller-manager) remove its policy
// and the policy's binding.
func TestPolicyGoesWithItsKind(t *testing.T) {
	testenv.Need(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := install.CRDs(ctx, env.Config, ""); err != nil {
		t.Fatal(err)
	}
	gadget := ad("gadget", "Gadget", "gadgets")
	vap, binding := policy("gadget-names.acme.io", "gadgets")
	if _, err := adinstaller.Install(ctx, env.Client, "gc", []*unstructured.Unstructured{gadget, vap, binding}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, gadget); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*unstructured.Unstructured{vap, binding} {
		for {
			_, err := get(t, o)
			if apierrors.IsNotFound(err) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s %s outlived its kind: %v", o.GetKind(), o.GetName(), err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func TestRebind(t *testing.T) {
	own, foreign := ad("web", "Web", "webs"), ad("db", "DB", "dbs")
	_ = unstructured.SetNestedField(own.Object, "acme", "spec", "release", "source")
	_ = unstructured.SetNestedField(foreign.Object, "other", "spec", "release", "source")
	vap, _ := policy("p", "webs")
	in := []*unstructured.Unstructured{own, foreign, vap}
	out := adinstaller.Rebind(in, "acme", "acme-prod")
	for i, tc := range []struct{ source string }{{"acme-prod"}, {"other"}, {""}} {
		got, _, _ := unstructured.NestedString(out[i].Object, "spec", "release", "source")
		if got != tc.source {
			t.Errorf("object %d (%s %s): release.source %q, want %q", i, out[i].GetKind(), out[i].GetName(), got, tc.source)
		}
	}
	if s, _, _ := unstructured.NestedString(own.Object, "spec", "release", "source"); s != "acme" {
		t.Errorf("Rebind modified its input: source %q", s)
	}
}

// CheckBound refuses an ApplicationDefinition that, after Rebind, names
// another source's chart, a chart by chartRef, or a component that is not
// one of the catalog's applications (contracts/artifact/README.md,
// "Definitions: the ApplicationDefinitions and their policies").
func TestCheckBound(t *testing.T) {
	ad := func(release map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"release": release}}}
		u.SetGroupVersionKind(adinstaller.InstalledKinds[0])
		u.SetName("echo")
		return u
	}
	apps := []string{"echo-tenant"}
	for _, tc := range []struct {
		name    string
		release map[string]any
		want    string // "" when bound
	}{
		{"its own application", map[string]any{"source": "demo", "component": "echo-tenant"}, ""},
		{"another source", map[string]any{"source": "services", "component": "postgres"}, `spec.release.source "services"`},
		{"a component", map[string]any{"source": "demo", "component": "echo-operator"}, `spec.release.component "echo-operator" is not an application`},
		{"a chartRef", map[string]any{"chartRef": map[string]any{"kind": "HelmChart", "name": "x"}}, "spec.release.chartRef"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := adinstaller.CheckBound([]*unstructured.Unstructured{ad(tc.release)}, "demo", apps)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "ApplicationDefinition echo") {
				t.Fatalf("err = %v, want one naming ApplicationDefinition echo and %q", err, tc.want)
			}
		})
	}
}
