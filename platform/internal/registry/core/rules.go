package core

import (
	"strings"
	"text/template"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// Helm's ownership marks, which Helm writes on every object of a release
// (and checks before it adopts one): the release's name and namespace.
// Helm runs as the namespace's installer identity; tenants write no
// Secrets (contract K5), so a tenant cannot put them on a Secret.
const (
	AnnotationReleaseName      = "meta.helm.sh/release-name"
	AnnotationReleaseNamespace = "meta.helm.sh/release-namespace"
)

// ReleaseOf returns the Helm release whose ownership marks obj carries in
// its own namespace, or "" when it carries none (a Secret a driver or
// controller made, Helm's own release storage) or names another namespace.
func ReleaseOf(obj metav1.Object) string {
	ann := obj.GetAnnotations()
	if ann[AnnotationReleaseNamespace] != obj.GetNamespace() {
		return ""
	}
	return ann[AnnotationReleaseName]
}

// Selected reports whether obj, an object of the release of application
// app in namespace ns, is selected by rules (an ApplicationDefinition's
// spec.secrets, contract K1, k1-application.md): some include selector
// matches it and no exclude selector does. A selector matches when its
// label selector (matchLabels, matchExpressions; empty matches all)
// matches obj's labels and, when it lists resourceNames, obj's name is one
// of them, each rendered as a Go template over .name (app) and .namespace
// (ns). A name that does not render, and a label selector that does not
// parse, match nothing.
func Selected(rules v1alpha1.ApplicationDefinitionResources, obj metav1.Object, app, ns string) bool {
	included := false
	for _, sel := range rules.Include {
		if matches(sel, obj, app, ns) {
			included = true
			break
		}
	}
	if !included {
		return false
	}
	for _, sel := range rules.Exclude {
		if matches(sel, obj, app, ns) {
			return false
		}
	}
	return true
}

func matches(sel *v1alpha1.ApplicationDefinitionResourceSelector, obj metav1.Object, app, ns string) bool {
	if sel == nil {
		return false
	}
	ls, err := metav1.LabelSelectorAsSelector(&sel.LabelSelector)
	if err != nil || !ls.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	if len(sel.ResourceNames) == 0 {
		return true
	}
	for _, n := range sel.ResourceNames {
		if name, ok := renderName(n, app, ns); ok && name == obj.GetName() {
			return true
		}
	}
	return false
}

// renderName renders one resourceNames entry; false when it is not a
// template over .name and .namespace.
func renderName(text, app, ns string) (string, bool) {
	if !strings.Contains(text, "{{") {
		return text, true
	}
	t, err := template.New("name").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if err := t.Execute(&b, map[string]string{"name": app, "namespace": ns}); err != nil {
		return "", false
	}
	return b.String(), true
}
