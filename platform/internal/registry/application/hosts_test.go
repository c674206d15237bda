package application

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
		name    string
		reason  string
		ns      string
		spec    string
		old     string
		refused []string // field paths, and the message's key phrase after "|"
	}{
		{
			name:   "empty host",
			reason: "an empty host is no host and is not checked",
			ns:     "tenant-root",
			spec:   `{host: ""}`,
		},
		{
			name:   "the namespace's own host",
			reason: "a tenant namespace may use its own host",
			ns:     "tenant-alpha",
			spec:   `{host: alpha.example.org}`,
		},
		{
			name:   "a subdomain",
			reason: "a subdomain of the namespace's host no other tenant covers is its own",
			ns:     "tenant-alpha",
			spec:   `{host: db.alpha.example.org}`,
		},
		{
			name:   "case and final dot",
			reason: "hosts compare without case and without the final dot",
			ns:     "tenant-alpha",
			spec:   `{host: DB.Alpha.Example.org.}`,
		},
		{
			name:   "a new child tenant's host",
			reason: "a parent may give a new child tenant a subdomain of its host no tenant holds yet",
			ns:     "tenant-root",
			spec:   `{host: gamma.example.org}`,
		},
		{
			name:    "the parent's host",
			reason:  "a child may not take its parent's host",
			ns:      "tenant-alpha",
			spec:    `{host: example.org}`,
			refused: []string{"spec.host|outside alpha.example.org"},
		},
		{
			name:    "a sibling's host",
			reason:  "a tenant may not take a sibling's host",
			ns:      "tenant-beta",
			spec:    `{host: alpha.example.org}`,
			refused: []string{"spec.host|outside beta.example.org"},
		},
		{
			name:    "another domain",
			reason:  "a host outside the tenant's domain is refused",
			ns:      "tenant-alpha",
			spec:    `{host: evil.com}`,
			refused: []string{"spec.host|outside"},
		},
		{
			name:    "suffix that is not a subdomain",
			reason:  "a suffix match is not a subdomain: xalpha is not under alpha",
			ns:      "tenant-alpha",
			spec:    `{host: xalpha.example.org}`,
			refused: []string{"spec.host|outside"},
		},
		{
			name:    "under a child tenant's host",
			reason:  "a parent may not use a host under a child tenant's host: that subtree is the child's",
			ns:      "tenant-root",
			spec:    `{host: www.alpha.example.org}`,
			refused: []string{"spec.host|under alpha.example.org, the host of tenant namespace tenant-alpha"},
		},
		{
			name:    "a child tenant's host itself",
			reason:  "a tenant may not take its own child tenant's host",
			ns:      "tenant-alpha",
			spec:    `{host: deep.alpha.example.org}`,
			refused: []string{"spec.host|tenant-alpha-deep"},
		},
		{
			name:   "host from an annotation",
			reason: "a namespace's host may be set as an annotation instead of the label",
			ns:     "tenant-long",
			spec:   `{host: x.long.example.org}`,
		},
		{
			name:    "no tenant namespace",
			reason:  "a namespace without a tenant host has no host to give",
			ns:      "plain",
			spec:    `{host: x.example.org}`,
			refused: []string{"spec.host|has no tenant host"},
		},
		{
			name:    "unknown namespace",
			reason:  "a namespace not in the cache yet is refused as not known, not passed",
			ns:      "gone",
			spec:    `{host: x.example.org}`,
			refused: []string{"spec.host|not known yet"},
		},
		{
			name:    "every marked field",
			reason:  "every field marked x-cozystack-host is checked, in arrays and maps; unmarked fields are not",
			ns:      "tenant-beta",
			spec:    `{ingresses: [{host: a.beta.example.org}, {host: evil.com}], aliases: {www: evil.org}, note: evil.com}`,
			refused: []string{"spec.aliases[www]|outside", "spec.ingresses[1].host|outside"},
		},
		{
			name:   "unchanged on update",
			reason: "an update that leaves a host as it was is not refused, so old objects stay editable",
			ns:     "tenant-root",
			spec:   `{host: alpha.example.org}`,
			old:    `{host: alpha.example.org}`,
		},
		{
			name:    "changed on update",
			reason:  "an update changing a host is checked like a create",
			ns:      "tenant-root",
			spec:    `{host: beta.example.org}`,
			old:     `{host: alpha.example.org}`,
			refused: []string{"spec.host|tenant-beta"},
		},
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
				t.Fatalf("%s: errors %v, want %d (%s): %v", tc.name, errs, len(tc.refused), tc.reason, tc.refused)
			}
			for i, want := range tc.refused {
				path, phrase, _ := strings.Cut(want, "|")
				if errs[i].Field != path || !strings.Contains(errs[i].Detail, phrase) || !strings.Contains(errs[i].Detail, "contract K2, Hosts") {
					t.Errorf("%s: error %d = %s: %s; want %s with %q and the rule (%s)", tc.name, i, errs[i].Field, errs[i].Detail, path, phrase, tc.reason)
				}
			}
		})
	}
}

// The host attack: a child was given its parent's exact
// host, and hosts derived by default (<name>.<parent's host>) were never
// checked, so two tenants both got prod.taa.<domain>. Every tenant's
// effective host is unique in the cluster (contract K2, Hosts).
func TestTenantHostsUnique(t *testing.T) {
	f := tenantFixture(t)
	root := f.ns
	domain := root + ".example.org"
	n := &corev1.Namespace{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Name: root}, n); err != nil {
		t.Fatal(err)
	}
	n.Labels = map[string]string{v1alpha1.LabelHost: domain}
	if err := f.c.Update(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if err := f.createIn(root, "taa", `{}`); err != nil {
		t.Fatal(err)
	}
	taa := f.tenantNamespace(root, "taa", "taa."+domain, nil)
	for f.rest.strategy.parentHost(context.Background(), root) != domain {
		time.Sleep(20 * time.Millisecond) // the informer catches up with the label
	}

	// Creating an existing Tenant again is AlreadyExists: its own
	// namespace's host is no obstacle.
	if err := f.createIn(root, "taa", `{}`); !apierrors.IsAlreadyExists(err) {
		t.Errorf("taa again: err = %v, want AlreadyExists", err)
	}

	const rule = "unique in the cluster"
	// The parent's exact host, explicit.
	refused(t, "the parent's exact host", f.createIn(taa, "x", `{host: taa.`+domain+`}`),
		"spec.host", "spec.host taa."+domain+" is the host of the parent tenant namespace "+taa, rule)

	// Two tenants deriving prod.taa.<domain> in different places: here a
	// tenant namespace that already carries its parent's host (as the
	// attack made it before this rule) holds Tenant prod.
	twin := f.tenantNamespace(taa, "twin", "taa."+domain, nil)
	if err := f.createIn(twin, "prod", `{}`); err != nil {
		t.Fatalf("the first prod: %v", err)
	}
	refused(t, "a second derived prod.taa", f.createIn(taa, "prod", `{}`),
		"spec.host", "the derived host prod.taa."+domain+" is already the host of Tenant "+twin+"/prod", rule, "set spec.host to another name")

	// An explicit host, then a Tenant deriving the same one (neither has a
	// namespace yet).
	if err := f.createIn(taa, "y", `{host: dev.taa.`+domain+`}`); err != nil {
		t.Fatal(err)
	}
	refused(t, "deriving an explicit host", f.createIn(taa, "dev", `{}`), "spec.host", "is already the host of Tenant "+taa+"/y")
	// ... and the other way round.
	if err := f.createIn(taa, "qa", `{}`); err != nil {
		t.Fatal(err)
	}
	refused(t, "setting a derived host", f.createIn(taa, "z", `{host: qa.taa.`+domain+`}`), "spec.host", "spec.host qa.taa."+domain+" is already the host of Tenant "+taa+"/qa")

	// A host a tenant namespace carries, derived.
	f.tenantNamespace(taa, "stage", "stage.taa."+domain, nil)
	refused(t, "deriving a namespace's host", f.createIn(taa, "stage2", `{host: stage.taa.`+domain+`}`), "spec.host", "is already the host of Tenant "+taa+"/stage (namespace "+taa+"-stage)")

	// Distinct hosts pass, and an update keeping the host is not refused.
	if err := f.createIn(taa, "ok", `{host: ok2.taa.`+domain+`}`); err != nil {
		t.Errorf("a free host: %v", err)
	}
	if err := f.updateIn(taa, "qa", `{monitoring: true}`); err != nil {
		t.Errorf("an update keeping the derived host: %v", err)
	}
}
