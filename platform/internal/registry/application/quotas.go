package application

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/quotatree"
)

// DefaultRootChildTenants is how many child Tenants a namespace that no
// Tenant renders (tenant-root) may hold unless cozystack-api's flag
// --root-child-tenants says otherwise (contract K2, Tenant quotas).
const DefaultRootChildTenants = 100

var quotasPath = specPath.Child(quotatree.ValuesKey)

// tenantLocks serializes, per namespace, the creates and updates of
// Tenants in this process: the checks of the quota tree and of
// childTenants read the namespace's other Tenants, so two requests racing
// between that read and their write would both pass. Another replica of
// cozystack-api can still race this one (contract K2, Tenant quotas).
var tenantLocks sync.Map // namespace -> *sync.Mutex

// lockTenants locks namespace ns for a Tenant create or update and
// returns the unlock; for other kinds it does nothing.
func (s *strategy) lockTenants(ns string) func() {
	if s.kind.Kind != TenantKind {
		return func() {}
	}
	m, _ := tenantLocks.LoadOrStore(ns, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// validateTenantQuotas applies the quota tree (contract K2,
// k2-cluster-values.md, "Tenant quotas"; package quotatree) to a Tenant
// app in namespace P, created or replacing old:
//   - for every resource P is limited in, the Tenant sets a limit
//     (spec.resourceQuotas[<resource>]), at most P's limit minus what
//     P's other child Tenants hold minus P's own use (its ResourceQuotas'
//     status.used). On update only a limit that grows or appears is
//     checked: shrinking never takes from anyone, and a limit P's
//     siblings and use since outgrew stays (ratcheting);
//   - on update, its limits stay at least what its own child Tenants
//     hold, and a resource it starts limiting is one each child limits.
//
// Errors are Forbidden on the resource's field, with P's limit and where
// it comes from, what siblings hold and P uses, and the fix. Other kinds
// pass.
func (s *strategy) validateTenantQuotas(ctx context.Context, app, old *unstructured.Unstructured) field.ErrorList {
	if s.kind.Kind != TenantKind || s.client == nil {
		return nil
	}
	spec, _ := app.Object["spec"].(map[string]any)
	mine, err := quotatree.ParseLimits(spec[quotatree.ValuesKey])
	if err != nil {
		// The schema refuses it too; say it once more in its terms.
		return field.ErrorList{field.Invalid(quotasPath, spec[quotatree.ValuesKey], err.Error())}
	}
	before := corev1.ResourceList{}
	if old != nil {
		oldSpec, _ := old.Object["spec"].(map[string]any)
		before, _ = quotatree.ParseLimits(oldSpec[quotatree.ValuesKey])
	}
	parent := app.GetNamespace()
	n := &corev1.Namespace{}
	if err := s.client.Get(ctx, client.ObjectKey{Name: parent}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // the create fails in admission (NamespaceLifecycle)
		}
		return field.ErrorList{field.InternalError(quotasPath, fmt.Errorf("reading namespace %s: %w", parent, err))}
	}
	owner, err := quotatree.Owner(ctx, s.client, n)
	if err != nil {
		return field.ErrorList{field.InternalError(quotasPath, err)}
	}
	limits, err := quotatree.Limits(ctx, s.client, n, owner)
	if err != nil {
		return field.ErrorList{field.InternalError(quotasPath, err)}
	}
	var errs field.ErrorList
	if len(limits) > 0 {
		children, err := quotatree.Children(ctx, s.client, parent)
		if err != nil {
			return field.ErrorList{field.InternalError(quotasPath, err)}
		}
		siblings := slices.DeleteFunc(children, func(t quotatree.Tenant) bool { return t.Name == app.GetName() })
		used, err := quotatree.Used(ctx, s.client, parent)
		if err != nil {
			return field.ErrorList{field.InternalError(quotasPath, err)}
		}
		for _, name := range slices.Sorted(maps.Keys(limits)) {
			b := limits[name]
			p := quotasPath.Key(string(name))
			given, who := quotatree.Given(siblings, name)
			if who == "" {
				who = "none"
			}
			use := used[name]
			left := b.Quantity.DeepCopy()
			left.Sub(given)
			left.Sub(use)
			account := fmt.Sprintf("namespace %s is limited to %s %s (%s); its other child Tenants hold %s (%s) and it uses %s itself, which leaves %s",
				parent, b.Quantity.String(), name, b.Source, given.String(), who, use.String(), left.String())
			q, ok := mine[name]
			if !ok {
				if _, had := before[name]; old != nil && !had {
					continue // as stored before the rule
				}
				errs = append(errs, field.Required(p, fmt.Sprintf(
					"a child Tenant must limit every resource its parent limits: %s (%s): set spec.resourceQuotas[%s] to at most %s",
					account, quotatree.Rule, name, nonNegative(left))))
				continue
			}
			if prev, had := before[name]; had && q.Cmp(prev) <= 0 {
				continue
			}
			if q.Cmp(left) > 0 {
				errs = append(errs, field.Forbidden(p, fmt.Sprintf(
					"%s exceeds what the parent has left: %s (%s): ask for at most %s, or have the parent's admins raise %s, lower another child Tenant's limit, or use less in %s",
					q.String(), account, quotatree.Rule, nonNegative(left), b.Source, parent)))
			}
		}
	}
	if old != nil {
		errs = append(errs, s.validateQuotasCoverChildren(ctx, app, mine, before)...)
	}
	return errs
}

// validateQuotasCoverChildren refuses an update of Tenant app that would
// limit it below what its own child Tenants hold, or start limiting a
// resource one of them does not limit.
func (s *strategy) validateQuotasCoverChildren(ctx context.Context, app *unstructured.Unstructured, mine, before corev1.ResourceList) field.ErrorList {
	own := TenantNamespace(app.GetNamespace(), app.GetName())
	children, err := quotatree.Children(ctx, s.client, own)
	if err != nil {
		return field.ErrorList{field.InternalError(quotasPath, err)}
	}
	if len(children) == 0 {
		return nil
	}
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(mine)) {
		q := mine[name]
		p := quotasPath.Key(string(name))
		if prev, had := before[name]; !had {
			var lacking []string
			for _, c := range children {
				if _, ok := c.Limits[name]; !ok {
					lacking = append(lacking, c.String())
				}
			}
			if len(lacking) > 0 {
				errs = append(errs, field.Forbidden(p, fmt.Sprintf(
					"the child Tenants %s set no limit for %s, so the Tenant cannot start limiting it (%s): set spec.resourceQuotas[%s] on each of them first",
					strings.Join(lacking, ", "), name, quotatree.Rule, name)))
				continue
			}
		} else if q.Cmp(prev) >= 0 {
			continue
		}
		held, who := quotatree.Given(children, name)
		if q.Cmp(held) < 0 {
			errs = append(errs, field.Forbidden(p, fmt.Sprintf(
				"%s is less than the child Tenants of namespace %s hold of %s: %s (%s); a Tenant's limit covers its whole subtree (%s): lower theirs first, or keep at least %s",
				q.String(), own, name, held.String(), who, quotatree.Rule, held.String())))
		}
	}
	return errs
}

// validateChildTenants refuses a new Tenant when namespace P already holds
// as many child Tenants as it may: spec.childTenants of the Tenant that
// renders P (its schema default when unset), or for a namespace no Tenant
// renders (tenant-root) the server's limit (--root-child-tenants).
func (s *strategy) validateChildTenants(ctx context.Context, app *unstructured.Unstructured) field.ErrorList {
	if s.kind.Kind != TenantKind || s.client == nil {
		return nil
	}
	parent := app.GetNamespace()
	path := metadataPath.Child("namespace")
	limit := s.rootChildTenants
	if limit <= 0 {
		limit = DefaultRootChildTenants
	}
	source := fmt.Sprintf("the cozystack-api flag --root-child-tenants (default %d), for a namespace no Tenant renders", DefaultRootChildTenants)
	fix := "have the platform's operator raise cozystack-api's --root-child-tenants"
	n := &corev1.Namespace{}
	if err := s.client.Get(ctx, client.ObjectKey{Name: parent}, n); err == nil {
		owner, err := quotatree.Owner(ctx, s.client, n)
		if err != nil {
			return field.ErrorList{field.InternalError(path, err)}
		}
		if owner != nil {
			values := runtime.DeepCopyJSON(owner.Values)
			if values == nil {
				values = map[string]any{}
			}
			s.kind.Schema.Default(values)
			if v, ok := toInt(values[quotatree.ChildTenantsKey]); ok {
				limit = v
				source = fmt.Sprintf("spec.childTenants of Tenant %s", owner)
				if _, set := owner.Values[quotatree.ChildTenantsKey]; !set {
					source += fmt.Sprintf(", unset: its default %d", v)
				}
				fix = fmt.Sprintf("the admins of namespace %s may raise spec.childTenants of Tenant %s", owner.Namespace, owner)
			}
		}
	} else if !apierrors.IsNotFound(err) {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("reading namespace %s: %w", parent, err))}
	}
	children, err := quotatree.Children(ctx, s.client, parent)
	if err != nil {
		return field.ErrorList{field.InternalError(path, err)}
	}
	others := slices.DeleteFunc(children, func(t quotatree.Tenant) bool { return t.Name == app.GetName() })
	if len(others) >= limit {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"namespace %s already holds %d child Tenants, its limit (%s) (%s): delete one, or %s",
			parent, len(others), source, quotatree.Rule, fix))}
	}
	return nil
}

// nonNegative prints q, or 0 when q is below zero.
func nonNegative(q resource.Quantity) string {
	if q.Sign() < 0 {
		return "0"
	}
	return q.String()
}

// toInt reads an integer value as decoders give it.
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case json.Number:
		i, err := x.Int64()
		return int(i), err == nil
	case float64:
		return int(x), x == float64(int(x))
	case int64:
		return int(x), true
	case int:
		return x, true
	}
	return 0, false
}
