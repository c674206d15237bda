package application

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

const hostSchema = `{
  "type": "object",
  "properties": {
    "host": {"type": "string", "default": "", "x-cozystack-host": true},
    "ingresses": {"type": "array", "items": {"type": "object", "properties": {"host": {"type": "string", "x-cozystack-host": true}}}},
    "aliases": {"type": "object", "additionalProperties": {"type": "string", "x-cozystack-host": true}},
    "note": {"type": "string"}
  }
}`

// The one host rule (K2, Hosts): a host is the tenant namespace's own, or
// a subdomain of it no other tenant's host covers more closely. It is
// what keeps a Tenant's host in its parent's subtree.
func TestHostRule(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for name, host := range map[string]string{
		"tenant-root":       "example.org",
		"tenant-alpha":      "alpha.example.org",
		"tenant-alpha-deep": "deep.alpha.example.org",
		"tenant-beta":       "beta.example.org",
		"tenant-long":       "", // set as an annotation below
		"plain":             "",
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if host != "" {
			ns.Labels = map[string]string{v1alpha1.LabelHost: host}
		}
		if name == "tenant-long" {
			ns.Annotations = map[string]string{v1alpha1.LabelHost: "long.example.org"}
		}
		if err := indexer.Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	r := &REST{strategy: &strategy{kind: compileKind(t, postgresAD(hostSchema)), ns: corelisters.NewNamespaceLister(indexer)}}
	for _, tc := range []struct {
		name, ns, spec, old string
		refused             []string // field paths, and the message's key phrase after "|"
	}{
		{name: "empty host", ns: "tenant-root", spec: `{host: ""}`},
		{name: "the namespace's own host", ns: "tenant-alpha", spec: `{host: alpha.example.org}`},
		{name: "a subdomain", ns: "tenant-alpha", spec: `{host: db.alpha.example.org}`},
		{name: "case and final dot", ns: "tenant-alpha", spec: `{host: DB.Alpha.Example.org.}`},
		{name: "a new child tenant's host", ns: "tenant-root", spec: `{host: gamma.example.org}`},
		{name: "the parent's host", ns: "tenant-alpha", spec: `{host: example.org}`, refused: []string{"spec.host|outside alpha.example.org"}},
		{name: "a sibling's host", ns: "tenant-beta", spec: `{host: alpha.example.org}`, refused: []string{"spec.host|outside beta.example.org"}},
		{name: "another domain", ns: "tenant-alpha", spec: `{host: evil.com}`, refused: []string{"spec.host|outside"}},
		{name: "suffix that is not a subdomain", ns: "tenant-alpha", spec: `{host: xalpha.example.org}`, refused: []string{"spec.host|outside"}},
		{name: "under a child tenant's host", ns: "tenant-root", spec: `{host: www.alpha.example.org}`, refused: []string{"spec.host|under alpha.example.org, the host of tenant namespace tenant-alpha"}},
		{name: "a child tenant's host itself", ns: "tenant-alpha", spec: `{host: deep.alpha.example.org}`, refused: []string{"spec.host|tenant-alpha-deep"}},
		{name: "host from an annotation", ns: "tenant-long", spec: `{host: x.long.example.org}`},
		{name: "no tenant namespace", ns: "plain", spec: `{host: x.example.org}`, refused: []string{"spec.host|has no tenant host"}},
		{name: "unknown namespace", ns: "gone", spec: `{host: x.example.org}`, refused: []string{"spec.host|not known yet"}},
		{name: "every marked field", ns: "tenant-beta", spec: `{ingresses: [{host: a.beta.example.org}, {host: evil.com}], aliases: {www: evil.org}, note: evil.com}`,
			refused: []string{"spec.aliases[www]|outside", "spec.ingresses[1].host|outside"}},
		{name: "unchanged on update", ns: "tenant-root", spec: `{host: alpha.example.org}`, old: `{host: alpha.example.org}`},
		{name: "changed on update", ns: "tenant-root", spec: `{host: beta.example.org}`, old: `{host: alpha.example.org}`, refused: []string{"spec.host|tenant-beta"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := app(t, `{spec: `+tc.spec+`}`)
			a.SetNamespace(tc.ns)
			var old *unstructured.Unstructured
			if tc.old != "" {
				old = app(t, `{spec: `+tc.old+`}`)
			}
			errs := r.strategy.validateHosts(a, old)
			if len(errs) != len(tc.refused) {
				t.Fatalf("errors %v, want %d: %v", errs, len(tc.refused), tc.refused)
			}
			for i, want := range tc.refused {
				path, phrase, _ := strings.Cut(want, "|")
				if errs[i].Field != path || !strings.Contains(errs[i].Detail, phrase) || !strings.Contains(errs[i].Detail, "contract K2, Hosts") {
					t.Errorf("error %d = %s: %s; want %s with %q and the rule", i, errs[i].Field, errs[i].Detail, path, phrase)
				}
			}
		})
	}
}
