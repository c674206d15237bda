package artifact

// The checks CheckDefinitions (definitions.go) runs on an object of the
// definitions: its release, metadata, strict decoding, a policy's match
// rules, the published schema, and the tenant roles of the catalog.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/valuesschema"
)

// CheckDefinitionRelease checks the release of an ApplicationDefinition
// that catalog c ships: it names one of c's own application charts, by
// release.source (c's name; the operator points it at the PackageSource
// that serves c) and release.component (an applications[].name), and no
// chartRef. So a catalog's kind installs only a chart of the same catalog,
// with that catalog's rights, never another catalog's chart, nor a
// component's (an operator's) chart, nor any chart a chartRef could name.
func CheckDefinitionRelease(c *Catalog, rel v1alpha1.ApplicationDefinitionRelease) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "release")
	var apps []string
	for _, a := range c.Applications {
		apps = append(apps, a.Name)
	}
	if rel.ChartRef != nil {
		errs = append(errs, field.Forbidden(p.Child("chartRef"), fmt.Sprintf(
			"a catalog's ApplicationDefinition names its chart by source and component, never by chartRef: set source: %s and component: one of %v", c.Name, apps)))
	}
	if rel.Source != c.Name {
		errs = append(errs, field.Invalid(p.Child("source"), rel.Source, fmt.Sprintf(
			"a catalog's ApplicationDefinition installs only the catalog's own charts: set source: %s (this catalog's name)", c.Name)))
	}
	if !slices.Contains(apps, rel.Component) {
		errs = append(errs, field.NotSupported(p.Child("component"), rel.Component, apps))
	}
	return errs
}

// checkTenantRoles checks that applications' tenant roles name only the
// plurals of the catalog's own ApplicationDefinitions.
func checkTenantRoles(c *Catalog, plurals map[string]bool) []error {
	var errs []error
	for i, app := range c.Applications {
		p := field.NewPath("applications").Index(i).Child("tenantRoles")
		for _, e := range CheckTenantRoleRules(p, app.TenantRoles, plurals) {
			errs = append(errs, fmt.Errorf("%s: %s", CatalogFile, e.Error()))
		}
	}
	return errs
}

// checkMetadata checks metadata.name and metadata.namespace.
func checkMetadata(obj *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	name, found, err := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "name")
	p := field.NewPath("metadata", "name")
	switch s, isString := name.(string); {
	case err != nil || !found || name == nil || s == "" && isString:
		errs = append(errs, field.Required(p, "every object of the definitions is named"))
	case !isString:
		errs = append(errs, field.TypeInvalid(p, name, "a string"))
	default:
		for _, msg := range validation.IsDNS1123Subdomain(s) {
			errs = append(errs, field.Invalid(p, s, msg))
		}
	}
	if ns, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "namespace"); found && ns != "" && ns != nil {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "namespace"),
			fmt.Sprintf("the object is cluster-scoped: remove namespace %v", ns)))
	}
	return errs
}

// decodeStrict decodes obj into out, refusing unknown and duplicate
// fields.
func decodeStrict(obj *unstructured.Unstructured, out any) []error {
	js, err := json.Marshal(obj.Object)
	if err != nil {
		return []error{err}
	}
	strict, err := sigsjson.UnmarshalStrict(js, out, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return []error{fmt.Errorf("does not decode as kind %s: %w", obj.GetKind(), err)}
	}
	var errs []error
	for _, e := range strict {
		errs = append(errs, fmt.Errorf("%w: remove the field or fix its spelling", e))
	}
	return errs
}

// paramsForbidden says why a catalog's policy takes no parameters: the
// API server reads parameter objects with its own rights, so a policy
// could put any object (a Secret) into the messages tenants see.
const paramsForbidden = "a catalog's policy takes no parameter resources: the API server would read any object named (a Secret, say) with its own rights, and messages could show it to tenants; put the values in the policy's expressions"

// checkPolicy checks that a ValidatingAdmissionPolicy matches only the
// resources plurals (and their subresources) of apps.cozystack.io.
func checkPolicy(policy *admissionv1.ValidatingAdmissionPolicy, plurals map[string]bool) field.ErrorList {
	known := slices.Sorted(maps.Keys(plurals))
	var errs field.ErrorList
	if policy.Spec.ParamKind != nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "paramKind"), paramsForbidden))
	}
	rulesPath := field.NewPath("spec", "matchConstraints", "resourceRules")
	if policy.Spec.MatchConstraints == nil || len(policy.Spec.MatchConstraints.ResourceRules) == 0 {
		return append(errs, field.Required(rulesPath,
			fmt.Sprintf("a catalog's policy names the resources it matches: rules with apiGroups [%s] and resources among this catalog's kinds %v", ApplicationsGroup, known)))
	}
	for i, r := range policy.Spec.MatchConstraints.ResourceRules {
		rp := rulesPath.Index(i)
		if !slices.Equal(r.APIGroups, []string{ApplicationsGroup}) {
			errs = append(errs, field.Invalid(rp.Child("apiGroups"), r.APIGroups,
				fmt.Sprintf("must be exactly [%s]: a catalog's policy matches only the application kinds of its own ApplicationDefinitions", ApplicationsGroup)))
		}
		if len(r.Resources) == 0 {
			errs = append(errs, field.Required(rp.Child("resources"), fmt.Sprintf("name the resources: plurals of this catalog's kinds %v", known)))
		}
		for j, res := range r.Resources {
			resource, sub, hasSub := strings.Cut(res, "/")
			switch {
			case strings.Contains(res, "*"):
				errs = append(errs, field.Invalid(rp.Child("resources").Index(j), res, fmt.Sprintf("no wildcards: name the plurals of this catalog's kinds %v", known)))
			case !plurals[resource]:
				errs = append(errs, field.Invalid(rp.Child("resources").Index(j), res,
					fmt.Sprintf("%s is not the plural of an ApplicationDefinition of this catalog (%v): a catalog's policy matches only its own kinds", resource, known)))
			case hasSub && (sub == "" || strings.Contains(sub, "/")):
				errs = append(errs, field.Invalid(rp.Child("resources").Index(j), res, "a subresource is <plural>/<subresource>, e.g. postgreses/status"))
			}
		}
	}
	return errs
}

// CheckPublishedSchema refuses an openAPISchema that the application API
// cannot publish as the kind's OpenAPI v3 schema (valuesschema.OpenAPI:
// a $ref, patternProperties...): it would not serve the kind (Served=False,
// reason UnpublishableSchema). A schema that is not a JSON object is the
// API's to report (InvalidSchema) and passes here.
func CheckPublishedSchema(app v1alpha1.ApplicationDefinitionApplication) field.ErrorList {
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(app.OpenAPISchema))
	dec.UseNumber()
	if strings.TrimSpace(app.OpenAPISchema) == "" || dec.Decode(&doc) != nil {
		return nil
	}
	if _, err := valuesschema.OpenAPI(doc); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "application", "openAPISchema"), field.OmitValueType{}, err.Error())}
	}
	return nil
}
