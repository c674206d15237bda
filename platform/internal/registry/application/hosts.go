package application

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// validateHosts applies the one host rule of the platform (contract K2,
// k2-cluster-values.md, "Hosts") to every field of app marked
// x-cozystack-host (K1): a host is accepted when it equals the host of
// the tenant namespace the application lives in, or is a subdomain of it
// that no other tenant namespace's host covers more closely. So a Tenant's
// host stays in its parent's subtree, and no application takes a host
// under another tenant's. A value the stored application old already had
// at the same field is not checked again (ratcheting): a tenant's own
// namespace carries the host its Tenant chose.
func (s *strategy) validateHosts(app, old *unstructured.Unstructured) field.ErrorList {
	spec, _ := app.Object["spec"].(map[string]any)
	hosts := s.kind.Schema.Hosts(spec)
	if len(hosts) == 0 {
		return nil
	}
	before := map[string]string{}
	if old != nil {
		oldSpec, _ := old.Object["spec"].(map[string]any)
		for _, h := range s.kind.Schema.Hosts(oldSpec) {
			before[h.Path.String()] = h.Value
		}
	}
	var errs field.ErrorList
	for _, h := range hosts {
		if v, ok := before[h.Path.String()]; ok && v == h.Value {
			continue
		}
		if msg := s.hostRefused(app.GetNamespace(), h.Value); msg != "" {
			errs = append(errs, field.Forbidden(h.Path, msg))
		}
	}
	return errs
}

// hostRule is the rule as the messages state it.
const hostRule = "a host must be the host of the application's tenant namespace or a subdomain of it that no other tenant's host covers (contract K2, Hosts)"

// hostRefused returns why host may not be used by an application in
// namespace ns, or "".
func (s *strategy) hostRefused(ns, host string) string {
	host = normalizeHost(host)
	if s.ns == nil {
		return fmt.Sprintf("%s cannot be checked: this server does not read namespaces; %s", host, hostRule)
	}
	n, err := s.ns.Get(ns)
	if err != nil {
		return fmt.Sprintf("%s cannot be checked: namespace %s is not known yet (%v); retry; %s", host, ns, err, hostRule)
	}
	own := namespaceHost(n.Labels, n.Annotations)
	if own == "" {
		return fmt.Sprintf("%s: namespace %s has no tenant host (label %s); set the field only in a tenant namespace; %s", host, ns, v1alpha1.LabelHost, hostRule)
	}
	if !coveredBy(host, own) {
		return fmt.Sprintf("%s is outside %s, the host of tenant namespace %s; %s", host, own, ns, hostRule)
	}
	all, err := s.ns.List(labels.Everything())
	if err != nil {
		return fmt.Sprintf("%s cannot be checked: %v; %s", host, err, hostRule)
	}
	// The tenant namespace whose host covers host most closely owns it;
	// ns itself may share the length (a child tenant with its parent's
	// host).
	for _, other := range all {
		if other.Name == ns {
			continue
		}
		h := namespaceHost(other.Labels, other.Annotations)
		if h != "" && len(h) > len(own) && coveredBy(host, h) {
			return fmt.Sprintf("%s is under %s, the host of tenant namespace %s; %s", host, h, other.Name, hostRule)
		}
	}
	return ""
}

// namespaceHost is a namespace's K2 host (annotation, then label
// v1alpha1.LabelHost), normalized; "" for none.
func namespaceHost(labels, annotations map[string]string) string {
	return normalizeHost(v1alpha1.NamespaceValue(labels, annotations, v1alpha1.LabelHost))
}

// normalizeHost lower-cases a DNS name and drops a final dot.
func normalizeHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// coveredBy reports whether host is domain or a subdomain of it.
func coveredBy(host, domain string) bool {
	return host == domain || strings.HasSuffix(host, "."+domain)
}
