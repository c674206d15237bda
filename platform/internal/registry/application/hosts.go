package application

import (
	"context"
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/quotatree"
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
		if s.kind.Kind == TenantKind && h.Path.String() == tenantHostPath.String() {
			continue // validateTenantHost: a Tenant's host is unique too
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
func (s *strategy) hostRefused(ns, host string) string { return s.hostRefusedFor(ns, host, "") }

// hostRefusedFor is hostRefused for Tenant tenant of ns when tenant is not
// "": that Tenant's own namespace (it outlives the Tenant for a while, or
// the create is AlreadyExists) covers nothing against it.
func (s *strategy) hostRefusedFor(ns, host, tenant string) string {
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
	// only longer hosts than ns's own can (a namespace that shares ns's
	// host, made before Tenants' hosts were unique, does not take ns's
	// names from it).
	for _, other := range all {
		if other.Name == ns || tenant != "" && other.Labels[v1alpha1.LabelTenant] == tenant && other.Labels[labelParent] == ns {
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

// tenantHostPath is the Tenant's host field (platform/charts/tenant).
var tenantHostPath = specPath.Child("host")

// tenantHostRule is the uniqueness rule as the messages state it.
const tenantHostRule = "every tenant's effective host (spec.host, or <name>.<parent's host> when empty) is unique in the cluster and a name under its parent's host, never the parent's own (contract K2, Hosts)"

// validateTenantHost applies the host rule to a Tenant's effective host:
// spec.host, or, when it is empty, the host the chart derives,
// <name>.<host of the parent namespace>. That host must not be the
// parent's own, nor any other tenant's (a tenant namespace's label or
// annotation namespace.cozystack.io/host, or the effective host of a
// Tenant whose namespace is not made yet), and hostRefused must accept
// it. An update keeping the effective host is not checked again. When the
// parent namespace has no host yet, a derived host cannot be known (the
// chart waits for it too) and passes; an explicit one is refused as
// validateHosts refuses it. Other kinds pass.
func (s *strategy) validateTenantHost(ctx context.Context, app, old *unstructured.Unstructured) field.ErrorList {
	if s.kind.Kind != TenantKind {
		return nil
	}
	ns := app.GetNamespace()
	spec, _ := app.Object["spec"].(map[string]any)
	explicit, _ := spec["host"].(string)
	explicit = normalizeHost(explicit)
	parentHost := s.parentHost(ctx, ns)
	host := effectiveHost(explicit, app.GetName(), parentHost)
	if old != nil {
		oldSpec, _ := old.Object["spec"].(map[string]any)
		was, _ := oldSpec["host"].(string)
		if effectiveHost(normalizeHost(was), old.GetName(), parentHost) == host {
			return nil
		}
	}
	refuse := func(msg string) field.ErrorList { return field.ErrorList{field.Forbidden(tenantHostPath, msg)} }
	what := "spec.host " + host
	fix := "choose another spec.host"
	if explicit == "" {
		what = "the derived host " + host
		fix = "set spec.host to another name under " + parentHost + ", or choose another Tenant name"
	}
	if host == "" {
		if explicit != "" {
			if msg := s.hostRefused(ns, explicit); msg != "" {
				return refuse(msg)
			}
		}
		return nil
	}
	if explicit != "" && !coveredBy(host, parentHost) {
		// Outside the parent's subtree: the subtree rule says why.
		if msg := s.hostRefused(ns, explicit); msg != "" {
			return refuse(msg)
		}
	}
	if host == parentHost {
		return refuse(fmt.Sprintf("%s is the host of the parent tenant namespace %s; %s: leave spec.host empty for %s.%s, or choose a name under %s",
			what, ns, tenantHostRule, app.GetName(), parentHost, parentHost))
	}
	holder, err := s.hostHolder(ctx, host, ns, app.GetName())
	if err != nil {
		return field.ErrorList{field.InternalError(tenantHostPath, err)}
	}
	if holder != "" {
		return refuse(fmt.Sprintf("%s is already the host of %s; %s: %s", what, holder, tenantHostRule, fix))
	}
	if msg := s.hostRefusedFor(ns, host, app.GetName()); msg != "" {
		return refuse(what + ": " + msg)
	}
	return nil
}

// effectiveHost is the host the tenant chart gives Tenant name: explicit,
// or name.parentHost ("" when the parent's host is not known).
func effectiveHost(explicit, name, parentHost string) string {
	if explicit != "" {
		return explicit
	}
	if parentHost == "" {
		return ""
	}
	return name + "." + parentHost
}

// parentHost is the host of namespace ns from the namespace lister, or
// read from kube-apiserver when the lister does not know it yet; "" when
// it has none.
func (s *strategy) parentHost(ctx context.Context, ns string) string {
	if s.ns != nil {
		if n, err := s.ns.Get(ns); err == nil {
			return namespaceHost(n.Labels, n.Annotations)
		}
	}
	if s.client == nil {
		return ""
	}
	n := &corev1.Namespace{}
	if err := s.client.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
		return ""
	}
	return namespaceHost(n.Labels, n.Annotations)
}

// hostHolder names the tenant other than Tenant ns/name whose effective
// host is host: a tenant namespace carrying it ("Tenant <parent>/<name>
// (namespace <ns>)"), or a Tenant whose HelmRelease derives or sets it;
// "" for none.
func (s *strategy) hostHolder(ctx context.Context, host, ns, name string) (string, error) {
	own := TenantNamespace(ns, name)
	hosts := map[string]string{} // namespace -> host
	if s.ns != nil {
		all, err := s.ns.List(labels.Everything())
		if err != nil {
			return "", err
		}
		for _, n := range all {
			h := namespaceHost(n.Labels, n.Annotations)
			hosts[n.Name] = h
			if h != host || n.Name == own && n.Labels[v1alpha1.LabelTenant] == name && n.Labels[labelParent] == ns {
				continue
			}
			if t := n.Labels[v1alpha1.LabelTenant]; t != "" && n.Labels[labelParent] != "" {
				return fmt.Sprintf("Tenant %s/%s (namespace %s)", n.Labels[labelParent], t, n.Name), nil
			}
			return "tenant namespace " + n.Name, nil
		}
	}
	if s.client == nil {
		return "", nil
	}
	var tenants helmv2.HelmReleaseList
	if err := s.client.List(ctx, &tenants, client.MatchingLabels{v1alpha1.LabelApplicationKind: TenantKind}); err != nil {
		return "", fmt.Errorf("listing Tenants to keep hosts unique: %w", err)
	}
	for i := range tenants.Items {
		t := quotatree.FromRelease(&tenants.Items[i])
		if t.Name == "" || t.Namespace == ns && t.Name == name {
			continue
		}
		explicit, _ := t.Values["host"].(string)
		parentHost, known := hosts[t.Namespace]
		if !known {
			parentHost = s.parentHost(ctx, t.Namespace)
		}
		if effectiveHost(normalizeHost(explicit), t.Name, parentHost) == host {
			return fmt.Sprintf("Tenant %s", t), nil
		}
	}
	return "", nil
}
