package adinstaller

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Two prefixes overlap when one starts the other: their HelmRelease names
// <prefix><name> can then be equal.
func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"postgres-", "postgres-", true},
		{"vm-", "vm-disk-", true},
		{"vm-disk-", "vm-", true},
		{"", "redis-", true},
		{"vm-disk-", "vm-instance-", false},
		{"rtgizmo-", "rtgizmo2-", false},
	} {
		if got := overlap(tc.a, tc.b); got != tc.want {
			t.Errorf("overlap(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// Names an application kind would shadow come from discovery: every
// served resource outside apps.cozystack.io, by plural, singular and
// short name; the refusal names the resource.
func TestShadowing(t *testing.T) {
	served := ServedNames([]*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", SingularName: "configmap", ShortNames: []string{"cm"}},
			{Name: "pods", SingularName: "pod", ShortNames: []string{"po"}},
			{Name: "pods/log"},
		}},
		{GroupVersion: "helm.toolkit.fluxcd.io/v2", APIResources: []metav1.APIResource{
			{Name: "helmreleases", SingularName: "helmrelease", ShortNames: []string{"hr"}},
		}},
		{GroupVersion: "apps.cozystack.io/v1alpha1", APIResources: []metav1.APIResource{
			{Name: "gadgets", SingularName: "gadget"},
		}},
	})
	if served["cm"] != "configmaps" || served["hr"] != "helmreleases.helm.toolkit.fluxcd.io" || served["pods/log"] != "" {
		t.Errorf("ServedNames = %v", served)
	}
	if _, ok := served["gadgets"]; ok {
		t.Errorf("ServedNames holds the application kinds' names: %v", served)
	}
	ad := func(name, plural, singular string, short ...any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"application": map[string]any{
			"plural": plural, "singular": singular, "shortNames": short}}}}
		u.SetGroupVersionKind(InstalledKinds[0])
		u.SetName(name)
		return u
	}
	if err := Shadowing([]*unstructured.Unstructured{ad("gadget", "gadgets", "gadget", "gd")}, served); err != nil {
		t.Errorf("an application of its own names: %v", err)
	}
	err := Shadowing([]*unstructured.Unstructured{ad("evil", "evils", "pod", "ev", "hr")}, served)
	var conflict *ConflictError
	if !errors.As(err, &conflict) || len(conflict.Objects) != 2 {
		t.Fatalf("Shadowing = %v, want two conflicts", err)
	}
	for _, want := range []string{
		`ApplicationDefinition evil (its short name "hr" is a name of the served resource helmreleases.helm.toolkit.fluxcd.io`,
		`ApplicationDefinition evil (its singular "pod" is a name of the served resource pods`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Shadowing = %v, want %q", err, want)
		}
	}
}
