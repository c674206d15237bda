package quotatree

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

const (
	// TenantQuotaName is the ResourceQuota the tenant chart renders in a
	// tenant namespace from its Tenant's resourceQuotas
	// (platform/charts/tenant/templates/resourcequota.yaml).
	TenantQuotaName = "tenant-quota"
	// SubtreeQuotaName is the ResourceQuota cozystack-controller keeps in
	// a tenant namespace: hard = the namespace's limits minus its child
	// Tenants' limits (package controller/tenantquota).
	SubtreeQuotaName = "tenant-subtree"
	// ValuesKey is the Tenant value holding the limits.
	ValuesKey = "resourceQuotas"
	// ChildTenantsKey is the Tenant value bounding its number of child
	// Tenants.
	ChildTenantsKey = "childTenants"
	// TenantKind is the kind of the platform's Tenant applications.
	TenantKind = "Tenant"
	// Rule names the contract section the messages cite.
	Rule = "contract K2, Tenant quotas"
)

// Tenant is one Tenant application as the quota tree reads it from its
// HelmRelease.
type Tenant struct {
	// Namespace and Name are the application's (the HelmRelease's
	// namespace, its label apps.cozystack.io/application.name).
	Namespace, Name string
	// Values are the user's values (the HelmRelease's spec.values without
	// defaults); nil for none.
	Values map[string]any
	// Limits are the parsed Values[ValuesKey].
	Limits corev1.ResourceList
	// Err is why the values or limits could not be read; Limits is empty
	// then.
	Err error
}

// String is "namespace/name".
func (t Tenant) String() string { return t.Namespace + "/" + t.Name }

// FromRelease reads the Tenant of HelmRelease hr (labelled with the
// application name).
func FromRelease(hr *helmv2.HelmRelease) Tenant {
	t := Tenant{Namespace: hr.Namespace, Name: hr.Labels[v1alpha1.LabelApplicationName]}
	if hr.Spec.Values == nil || len(hr.Spec.Values.Raw) == 0 {
		return t
	}
	dec := json.NewDecoder(bytes.NewReader(hr.Spec.Values.Raw))
	dec.UseNumber()
	if err := dec.Decode(&t.Values); err != nil {
		t.Err = fmt.Errorf("HelmRelease %s/%s values: %w", hr.Namespace, hr.Name, err)
		return t
	}
	t.Limits, t.Err = ParseLimits(t.Values[ValuesKey])
	return t
}

// ParseLimits reads a resourceQuotas value: an object of resource names to
// integers or quantity strings (nil is no limit). Numbers may come as
// json.Number, float64, int64 or int, as decoders give them.
func ParseLimits(v any) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	if v == nil {
		return out, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is %T, want an object", ValuesKey, v)
	}
	for name, raw := range m {
		q, err := ParseQuantity(raw)
		if err != nil {
			return nil, fmt.Errorf("%s[%s]: %w", ValuesKey, name, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// ParseQuantity reads one limit: an integer or a quantity string.
func ParseQuantity(raw any) (resource.Quantity, error) {
	var s string
	switch x := raw.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	case float64:
		s = fmt.Sprint(x)
		if x == float64(int64(x)) {
			s = fmt.Sprint(int64(x))
		}
	case int64:
		s = fmt.Sprint(x)
	case int:
		s = fmt.Sprint(x)
	default:
		return resource.Quantity{}, fmt.Errorf("%v (%T) is not a quantity", raw, raw)
	}
	return resource.ParseQuantity(s)
}

// Children lists the Tenants whose HelmReleases are in namespace ns,
// sorted by name: the child Tenants of the tenant namespace ns, installed
// or not.
func Children(ctx context.Context, r client.Reader, ns string) ([]Tenant, error) {
	var hrs helmv2.HelmReleaseList
	if err := r.List(ctx, &hrs, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelApplicationKind: TenantKind}); err != nil {
		return nil, fmt.Errorf("listing the Tenants of namespace %s: %w", ns, err)
	}
	out := make([]Tenant, 0, len(hrs.Items))
	for i := range hrs.Items {
		if hrs.Items[i].Labels[v1alpha1.LabelApplicationName] == "" {
			continue
		}
		out = append(out, FromRelease(&hrs.Items[i]))
	}
	slices.SortFunc(out, func(a, b Tenant) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Owner is the Tenant that renders tenant namespace n: the Tenant named by
// its label namespace.cozystack.io/tenant in the namespace its label
// namespace.cozystack.io/parent names. Nil, without error, when there is
// none (tenant-root, a namespace no Tenant renders, a Tenant gone).
func Owner(ctx context.Context, r client.Reader, n *corev1.Namespace) (*Tenant, error) {
	name, parent := n.Labels[v1alpha1.LabelTenant], n.Labels[v1alpha1.LabelParent]
	if name == "" || parent == "" {
		return nil, nil
	}
	var hrs helmv2.HelmReleaseList
	if err := r.List(ctx, &hrs, client.InNamespace(parent), client.MatchingLabels{
		v1alpha1.LabelApplicationKind: TenantKind, v1alpha1.LabelApplicationName: name,
	}); err != nil {
		return nil, fmt.Errorf("reading Tenant %s/%s: %w", parent, name, err)
	}
	if len(hrs.Items) == 0 {
		return nil, nil
	}
	t := FromRelease(&hrs.Items[0])
	return &t, nil
}

// Bound is one limit of a namespace and where it comes from, as messages
// state it.
type Bound struct {
	Quantity resource.Quantity
	Source   string
}

// Limits are the limits of tenant namespace n, per resource the smaller of
// its Tenant's resourceQuotas (owner, see Owner; nil for none) and the hard
// limits of its ResourceQuota TenantQuotaName, if any. Empty means the
// namespace is not limited.
func Limits(ctx context.Context, r client.Reader, n *corev1.Namespace, owner *Tenant) (map[corev1.ResourceName]Bound, error) {
	out := map[corev1.ResourceName]Bound{}
	if owner != nil {
		if owner.Err != nil {
			return nil, owner.Err
		}
		for name, q := range owner.Limits {
			out[name] = Bound{Quantity: q, Source: fmt.Sprintf("spec.resourceQuotas of Tenant %s", owner)}
		}
	}
	rq := &corev1.ResourceQuota{}
	err := r.Get(ctx, client.ObjectKey{Namespace: n.Name, Name: TenantQuotaName}, rq)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("reading ResourceQuota %s/%s: %w", n.Name, TenantQuotaName, err)
	default:
		for name, q := range rq.Spec.Hard {
			if b, ok := out[name]; !ok || q.Cmp(b.Quantity) < 0 {
				out[name] = Bound{Quantity: q, Source: fmt.Sprintf("ResourceQuota %s/%s", n.Name, TenantQuotaName)}
			}
		}
	}
	return out, nil
}

// Used is namespace ns's own use per resource: the largest status.used of
// its unscoped ResourceQuotas (each counts the whole namespace; scoped ones
// count only part of it).
func Used(ctx context.Context, r client.Reader, ns string) (corev1.ResourceList, error) {
	var rqs corev1.ResourceQuotaList
	if err := r.List(ctx, &rqs, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing the ResourceQuotas of namespace %s: %w", ns, err)
	}
	out := corev1.ResourceList{}
	for _, rq := range rqs.Items {
		if len(rq.Spec.Scopes) > 0 || rq.Spec.ScopeSelector != nil {
			continue
		}
		for name, q := range rq.Status.Used {
			if cur, ok := out[name]; !ok || q.Cmp(cur) > 0 {
				out[name] = q
			}
		}
	}
	return out, nil
}

// Given is what tenants hold of resource name together, and the list
// "a: 1, b: 500m" of those that hold some, for messages.
func Given(tenants []Tenant, name corev1.ResourceName) (resource.Quantity, string) {
	var sum resource.Quantity
	var parts []string
	for _, t := range tenants {
		if q, ok := t.Limits[name]; ok {
			sum.Add(q)
			parts = append(parts, fmt.Sprintf("%s: %s", t.Name, q.String()))
		}
	}
	return sum, strings.Join(parts, ", ")
}
