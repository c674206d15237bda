package packagereconciler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// CRD groups at admission (docs/operator/catalogs.md, "Catalog delivery", "What a
// third-party catalog gets", "CRD groups"): whatever route a chart takes
// (crds/, which Helm installs and, on upgrade with CreateReplace,
// replaces outside the release's ownership checks; templates; a workload
// creating CRDs at run time), a Package with a privileged component may
// create, change or delete only CustomResourceDefinitions of its catalog's
// provides.apiGroups, and give a conversion webhook only to the CRDs its
// components' consent names (conversionWebhooks, part of the privileges
// digest). The operator writes, per such Package, a
// ValidatingAdmissionPolicy and its binding, controlled by the Package,
// that deny any other CRD write by a ServiceAccount of the Package's
// components' namespaces (its installers and its workloads).

// crdPolicyName is the name of Package pkg's CRD policy and binding: a
// DNS subdomain, hashed when pkg is too long for it.
func crdPolicyName(pkg string) string {
	const prefix = "cozystack-package-crds."
	if len(prefix)+len(pkg) <= 253 {
		return prefix + pkg
	}
	sum := sha256.Sum256([]byte(pkg))
	return prefix + pkg[:200] + "." + hex.EncodeToString(sum[:])[:10]
}

// celString quotes s as a CEL string literal.
func celString(s string) string { return strconv.Quote(s) }

func celList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = celString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// crdPolicy returns Package p's CRD policy and binding for catalog (its
// provides.apiGroups are groups), its enabled components (whose
// namespaces' ServiceAccounts the policy applies to), the privileged
// components want, and owners (each API group of a served catalog,
// described by its holder), or nil when p has no privileged component.
func crdPolicy(p *v1alpha1.Package, catalog string, groups []string, components []v1alpha1.PackageComponent, want []v1alpha1.PrivilegedComponent, owners map[string]string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	if len(want) == 0 {
		return nil, nil
	}
	var namespaces, webhooks []string
	for _, c := range components {
		if !slices.Contains(namespaces, c.Namespace) {
			namespaces = append(namespaces, c.Namespace)
		}
	}
	for _, c := range want {
		if !slices.Contains(namespaces, c.Namespace) {
			namespaces = append(namespaces, c.Namespace)
		}
		for _, w := range c.ConversionWebhooks {
			if !slices.Contains(webhooks, w) {
				webhooks = append(webhooks, w)
			}
		}
	}
	slices.Sort(namespaces)
	slices.Sort(webhooks)
	var match []string
	for _, ns := range namespaces {
		match = append(match, "request.userInfo.username.startsWith("+celString("system:serviceaccount:"+ns+":")+")")
	}
	var ownerKeys []string
	for g := range owners {
		ownerKeys = append(ownerKeys, g)
	}
	slices.Sort(ownerKeys)
	var entries []string
	for _, g := range ownerKeys {
		entries = append(entries, celString(g)+": "+celString(owners[g]))
	}
	name := crdPolicyName(p.Name)
	who := fmt.Sprintf("Package %s (catalog %s)", p.Name, catalog)
	rule := `(docs/operator/catalogs.md, "Catalog delivery", "CRD groups")`

	m := ownerMeta(p, "")
	m.Name = name
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: m}
	policy.Spec = admissionregistrationv1.ValidatingAdmissionPolicySpec{
		FailurePolicy: ptr.To(admissionregistrationv1.Fail),
		MatchConstraints: &admissionregistrationv1.MatchResources{
			ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete},
					Rule: admissionregistrationv1.Rule{
						APIGroups: []string{"apiextensions.k8s.io"}, APIVersions: []string{"*"},
						Resources: []string{"customresourcedefinitions"},
					},
				},
			}},
		},
		MatchConditions: []admissionregistrationv1.MatchCondition{{
			Name:       "package-service-accounts",
			Expression: strings.Join(match, " || "),
		}},
		Variables: []admissionregistrationv1.Variable{
			{Name: "allowed", Expression: celList(groups)},
			{Name: "webhooks", Expression: celList(webhooks)},
			{Name: "owners", Expression: "{" + strings.Join(entries, ", ") + "}"},
			{Name: "crd", Expression: "object != null ? object : oldObject"},
			{Name: "foreign", Expression: "((object != null ? [object.spec.group] : []) + (oldObject != null ? [oldObject.spec.group] : [])).filter(g, !(g in variables.allowed))"},
		},
		Validations: []admissionregistrationv1.Validation{
			{
				Expression: "size(variables.foreign) == 0",
				Message:    "a CustomResourceDefinition of an API group not in the catalog's provides.apiGroups: " + who + " may create, change or delete only CRDs of its catalog's groups " + rule,
				MessageExpression: celString("CustomResourceDefinition ") + " + variables.crd.metadata.name + " + celString(" is of API group ") +
					" + variables.foreign[0] + " + celString(", which belongs to ") +
					" + (variables.foreign[0] in variables.owners ? variables.owners[variables.foreign[0]] : " + celString("no catalog of this cluster") + ") + " +
					celString(": "+who+" may create, change or delete only CRDs of its catalog's provides.apiGroups "+fmt.Sprint(groups)+" "+rule),
				Reason: ptr.To(metav1.StatusReasonForbidden),
			},
			{
				Expression: "object == null || !has(object.spec.conversion) || object.spec.conversion.strategy != 'Webhook' || object.metadata.name in variables.webhooks",
				Message:    "a conversion webhook on a CRD no conversionWebhooks of " + who + " names " + rule,
				MessageExpression: celString("CustomResourceDefinition ") + " + object.metadata.name + " +
					celString(" sets spec.conversion.strategy Webhook, which reads every object of the kind: "+who+" may give a conversion webhook only to the CRDs its privileged components name in conversionWebhooks "+fmt.Sprint(webhooks)+", with the cluster operator's consent (spec.approvedPrivileges) "+rule),
				Reason: ptr.To(metav1.StatusReasonForbidden),
			},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: *m.DeepCopy()}
	binding.Spec = admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
		PolicyName:        name,
		ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
	}
	return policy, binding
}

// groupOwners describes the holder of each API group of a served
// catalog: "catalog <c> (PackageSource <s>)", the oldest source first.
func (r *Reconciler) groupOwners(ctx context.Context) (map[string]string, error) {
	var list v1alpha1.PackageSourceList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil, err
	}
	srcs := list.Items
	slices.SortFunc(srcs, func(a, b v1alpha1.PackageSource) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	out := map[string]string{}
	for _, s := range srcs {
		if s.Status.Catalog == nil {
			continue
		}
		for _, g := range s.Status.Catalog.Provides.APIGroups {
			if _, ok := out[g]; !ok {
				out[g] = fmt.Sprintf("catalog %s (PackageSource %s)", s.Status.Catalog.Name, s.Name)
			}
		}
	}
	return out, nil
}

// ensureCRDPolicy writes (or, with no privileged component, deletes) the
// CRD policy and binding of the Package v installs, before any of its
// HelmReleases is written. An object of that name that p does not control
// is an error and is left alone.
func (r *Reconciler) ensureCRDPolicy(ctx context.Context, v *view, want []v1alpha1.PrivilegedComponent) error {
	owners, err := r.groupOwners(ctx)
	if err != nil {
		return err
	}
	policy, binding := crdPolicy(v.pkg, v.catalog(), v.source.Status.Catalog.Provides.APIGroups, v.enabled, want, owners)
	if policy == nil {
		return r.dropCRDPolicy(ctx, v.pkg)
	}
	// The policy first: a binding to a missing policy denies nothing.
	if err := r.writePolicyObject(ctx, v.pkg, policy, func(cur client.Object) bool {
		c := cur.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		same := apiequality.Semantic.DeepEqual(c.Spec.Variables, policy.Spec.Variables) &&
			apiequality.Semantic.DeepEqual(c.Spec.Validations, policy.Spec.Validations) &&
			apiequality.Semantic.DeepEqual(c.Spec.MatchConditions, policy.Spec.MatchConditions) &&
			apiequality.Semantic.DeepEqual(c.Spec.MatchConstraints.ResourceRules, policy.Spec.MatchConstraints.ResourceRules) &&
			ptr.Deref(c.Spec.FailurePolicy, "") == admissionregistrationv1.Fail
		c.Spec = policy.Spec
		return !same
	}); err != nil {
		return err
	}
	return r.writePolicyObject(ctx, v.pkg, binding, func(cur client.Object) bool {
		c := cur.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
		same := c.Spec.PolicyName == binding.Spec.PolicyName && slices.Equal(c.Spec.ValidationActions, binding.Spec.ValidationActions) &&
			c.Spec.MatchResources == nil && c.Spec.ParamRef == nil
		c.Spec = binding.Spec
		return !same
	})
}

// writePolicyObject creates want, or updates the object p controls with
// update (which copies want's spec into it and says whether it differed).
func (r *Reconciler) writePolicyObject(ctx context.Context, p *v1alpha1.Package, want client.Object, update func(cur client.Object) bool) error {
	cur, err := r.get(ctx, want)
	if err != nil {
		return err
	}
	what := describe(r.kindOf(want), want)
	if cur == nil {
		if err := r.Client.Create(ctx, want); err != nil {
			return fmt.Errorf("create %s: %w", what, err)
		}
		return nil
	}
	if !controlledBy(cur, p) {
		return fmt.Errorf("%s exists and belongs to %s, not to Package %s: delete it; no HelmRelease is written until the Package's CRD policy is in place", what, describeOwner(cur, p), p.Name)
	}
	if !update(cur) {
		return nil
	}
	if err := r.Client.Update(ctx, cur); err != nil {
		return fmt.Errorf("update %s: %w", what, err)
	}
	return nil
}

// dropCRDPolicy deletes Package p's CRD policy and binding, if p controls
// them (the garbage collector does the same once p is gone, through the
// controller reference).
func (r *Reconciler) dropCRDPolicy(ctx context.Context, p *v1alpha1.Package) error {
	name := crdPolicyName(p.Name)
	for _, obj := range []client.Object{
		&admissionregistrationv1.ValidatingAdmissionPolicyBinding{},
		&admissionregistrationv1.ValidatingAdmissionPolicy{},
	} {
		obj.SetName(name)
		cur, err := r.get(ctx, obj)
		if err != nil {
			return err
		}
		if cur == nil || !controlledBy(cur, p) {
			continue
		}
		if err := r.Client.Delete(ctx, cur); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s: %w", describe(r.kindOf(cur), cur), err)
		}
	}
	return nil
}
