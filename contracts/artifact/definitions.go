package artifact

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// DefinitionsDir is the catalog directory holding the definition files:
// the catalog's ApplicationDefinitions and the admission policies shipped
// with them, one or more YAML documents per *.yaml or *.yml file.
const DefinitionsDir = "applicationdefinitions"

// ApplicationsGroup is the API group of the application kinds the
// ApplicationDefinitions declare: the only group a catalog's
// ValidatingAdmissionPolicies may match.
const ApplicationsGroup = "apps.cozystack.io"

// The kinds a definition file may hold: what the platform installs from a
// catalog's definitions.
var (
	applicationDefinitionGVK = v1alpha1.GroupVersion.WithKind("ApplicationDefinition")
	policyGVK                = admissionv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicy")
	bindingGVK               = admissionv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicyBinding")
)

// Definition is one definitions layer: one file of the catalog's
// applicationdefinitions/ directory.
type Definition struct {
	// Path is the layer's title, the file's slash path relative to the
	// catalog directory, e.g. "applicationdefinitions/postgres.yaml".
	Path string
	// Descriptor of the file (DefinitionMediaType).
	Descriptor ocispec.Descriptor
	// Objects are the file's documents in file order, decoded
	// (DecodeDefinitionFile) and checked (CheckDefinitions).
	Objects []*unstructured.Unstructured
}

// DefinitionObjects returns all objects of all Definitions, in layer and
// then document order: deep copies, which the caller may change.
func (a *Artifact) DefinitionObjects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, d := range a.Definitions {
		for _, o := range d.Objects {
			out = append(out, o.DeepCopy())
		}
	}
	return out
}

// objectRef says where an object of the definitions is.
type objectRef struct {
	file string
	doc  int // index in the file's Objects
}

func (r objectRef) String() string { return fmt.Sprintf("%s, document %d", r.file, r.doc+1) }

// CheckDefinitions checks the objects of all definition files of catalog c
// and returns every problem at once (errors.Join), each as
// "<file>, document <n> (<kind> <name>): <field>: <problem>", n counting
// the file's objects from 1. The rules (README.md, "Definitions"):
//   - each object is a cozystack.io/v1alpha1 ApplicationDefinition, an
//     admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy or an
//     admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding:
//     the platform installs nothing else;
//   - each has metadata.name (a DNS subdomain) and no metadata.namespace
//     (all three are cluster-scoped); names are unique per kind;
//   - each decodes strictly into its Go type (v1alpha1.
//     ApplicationDefinition, admissionregistration/v1's): unknown and
//     duplicate fields are errors;
//   - an ApplicationDefinition's spec.application.kind is one of
//     provides.applicationKinds, and every kind there has exactly one
//     ApplicationDefinition (when there are definitions at all);
//   - an ApplicationDefinition's spec.release names one of the catalog's
//     own application charts: source is the catalog's name, component an
//     applications[].name, and there is no chartRef
//     (CheckDefinitionRelease);
//   - an ApplicationDefinition's spec.application plural, singular and
//     shortNames are no built-in resource's name or short name
//     (CheckNames, builtins.go);
//   - an ApplicationDefinition's spec.application.openAPISchema has an
//     OpenAPI v3 form the application API publishes
//     (CheckPublishedSchema: valuesschema.OpenAPI);
//   - a ValidatingAdmissionPolicy matches only the catalog's own kinds:
//     spec.matchConstraints.resourceRules is not empty, each rule's
//     apiGroups is exactly [apps.cozystack.io] and its resources are
//     plurals (spec.application.plural) of the catalog's
//     ApplicationDefinitions or their subresources ("postgreses/status"),
//     never "*";
//   - neither a policy nor a binding uses parameter resources (spec.paramKind,
//     spec.paramRef): the API server would read them with its own rights;
//   - a ValidatingAdmissionPolicyBinding's spec.policyName is a policy of
//     the definitions;
//   - a file holds at least one object.
//
// No definitions at all (an artifact made before they existed, a catalog
// without the directory) is valid.
func CheckDefinitions(c *Catalog, defs []Definition) error {
	if len(defs) == 0 {
		return errors.Join(checkTenantRoles(c, map[string]bool{})...)
	}
	var errs []error
	report := func(ref objectRef, obj *unstructured.Unstructured, list field.ErrorList) {
		for _, e := range list {
			errs = append(errs, fmt.Errorf("%s (%s %s): %s", ref, obj.GetKind(), obj.GetName(), e.Error()))
		}
	}
	type typed struct {
		ref    objectRef
		obj    *unstructured.Unstructured
		ad     *v1alpha1.ApplicationDefinition
		policy *admissionv1.ValidatingAdmissionPolicy
		bind   *admissionv1.ValidatingAdmissionPolicyBinding
	}
	var all []typed
	names := map[string]objectRef{} // kind + "/" + name
	for _, d := range defs {
		if len(d.Objects) == 0 {
			errs = append(errs, fmt.Errorf("%s: holds no object: remove the file, or add the ApplicationDefinition or policy it is for", d.Path))
		}
		for i, obj := range d.Objects {
			ref := objectRef{file: d.Path, doc: i}
			gvk := obj.GroupVersionKind()
			if gvk != applicationDefinitionGVK && gvk != policyGVK && gvk != bindingGVK {
				errs = append(errs, fmt.Errorf("%s: apiVersion %q, kind %q: the platform installs only %s ApplicationDefinition, %s ValidatingAdmissionPolicy and %s ValidatingAdmissionPolicyBinding from a catalog's definitions; remove the object, or ship it in a chart",
					ref, obj.GetAPIVersion(), obj.GetKind(), v1alpha1.GroupVersion, admissionv1.SchemeGroupVersion, admissionv1.SchemeGroupVersion))
				continue
			}
			list := checkMetadata(obj)
			if name := obj.GetName(); name != "" {
				key := gvk.Kind + "/" + name
				if first, ok := names[key]; ok {
					list = append(list, field.Invalid(field.NewPath("metadata", "name"), name, fmt.Sprintf("is also the name of the %s in %s: names are unique per kind", gvk.Kind, first)))
				} else {
					names[key] = ref
				}
			}
			t := typed{ref: ref, obj: obj}
			var into any
			switch gvk {
			case applicationDefinitionGVK:
				t.ad = &v1alpha1.ApplicationDefinition{}
				into = t.ad
			case policyGVK:
				t.policy = &admissionv1.ValidatingAdmissionPolicy{}
				into = t.policy
			default:
				t.bind = &admissionv1.ValidatingAdmissionPolicyBinding{}
				into = t.bind
			}
			report(ref, obj, list)
			if err := decodeStrict(obj, into); len(err) > 0 {
				for _, e := range err {
					errs = append(errs, fmt.Errorf("%s (%s %s): %w", ref, obj.GetKind(), obj.GetName(), e))
				}
				t.ad, t.policy, t.bind = nil, nil, nil
			}
			all = append(all, t)
		}
	}

	// ApplicationDefinitions: the kinds catalog.yaml provides, one each.
	kinds := map[string]objectRef{}
	plurals := map[string]bool{}
	policies := map[string]bool{}
	undecodedAD := false
	for _, t := range all {
		switch {
		case t.obj.GroupVersionKind() == applicationDefinitionGVK && t.ad == nil:
			undecodedAD = true
		case t.ad != nil:
			app := t.ad.Spec.Application
			p := field.NewPath("spec", "application", "kind")
			first, served := kinds[app.Kind]
			switch {
			case !slices.Contains(c.Provides.ApplicationKinds, app.Kind):
				report(t.ref, t.obj, field.ErrorList{field.Invalid(p, app.Kind,
					fmt.Sprintf("is not in catalog.yaml provides.applicationKinds %v: a catalog's ApplicationDefinitions serve the kinds it provides; add the kind there, or fix it", c.Provides.ApplicationKinds))})
			case served:
				report(t.ref, t.obj, field.ErrorList{field.Invalid(p, app.Kind, fmt.Sprintf("is also served by the ApplicationDefinition in %s: one ApplicationDefinition per kind", first))})
			default:
				kinds[app.Kind] = t.ref
			}
			if app.Plural != "" {
				plurals[app.Plural] = true
			}
			report(t.ref, t.obj, CheckDefinitionRelease(c, t.ad.Spec.Release))
			report(t.ref, t.obj, CheckNames(app))
			report(t.ref, t.obj, CheckPublishedSchema(app))
		case t.obj.GroupVersionKind() == policyGVK:
			// Also one that did not decode: its bindings are not
			// reported as unbound.
			policies[t.obj.GetName()] = true
		}
	}
	if !undecodedAD { // an ApplicationDefinition that did not decode may serve it
		for i, k := range c.Provides.ApplicationKinds {
			if _, ok := kinds[k]; !ok {
				errs = append(errs, fmt.Errorf("%s: provides.applicationKinds[%d]: kind %s has no ApplicationDefinition in %s/: add one, or remove the kind", CatalogFile, i, k, DefinitionsDir))
			}
		}
	}

	errs = append(errs, checkTenantRoles(c, plurals)...)

	// Policies match only this catalog's kinds; bindings bind this
	// catalog's policies.
	for _, t := range all {
		switch {
		case t.policy != nil:
			report(t.ref, t.obj, checkPolicy(t.policy, plurals))
		case t.bind != nil:
			if t.bind.Spec.ParamRef != nil {
				report(t.ref, t.obj, field.ErrorList{field.Forbidden(field.NewPath("spec", "paramRef"), paramsForbidden)})
			}
			p := field.NewPath("spec", "policyName")
			switch name := t.bind.Spec.PolicyName; {
			case name == "":
				report(t.ref, t.obj, field.ErrorList{field.Required(p, "the name of a ValidatingAdmissionPolicy of this catalog's definitions")})
			case !policies[name]:
				report(t.ref, t.obj, field.ErrorList{field.Invalid(p, name, fmt.Sprintf("is not a ValidatingAdmissionPolicy of this catalog's definitions (%v): a binding binds a policy of the same catalog",
					slices.Sorted(maps.Keys(policies))))})
			}
		}
	}
	return errors.Join(errs...)
}
