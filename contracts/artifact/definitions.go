package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/valuesschema"
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

// DefinitionFiles returns the definition files of the catalog directory
// catalogDir as slash paths relative to it, e.g.
// "applicationdefinitions/postgres.yaml": the *.yaml and *.yml entries of
// DefinitionsDir, sorted by name. None when the directory does not exist.
func DefinitionFiles(catalogDir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(catalogDir, DefinitionsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if IsDefinitionFileName(e.Name()) {
			files = append(files, path.Join(DefinitionsDir, e.Name()))
		}
	}
	slices.Sort(files)
	return files, nil
}

// IsDefinitionFileName reports whether name, a file name in
// DefinitionsDir, is a definition file: it ends in .yaml or .yml.
func IsDefinitionFileName(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// CheckDefinitionPath returns an error, saying what to change, unless s
// is the title of a definitions layer: "applicationdefinitions/<file>"
// with <file> a file name ending in .yaml or .yml, and the whole a chart
// path (CheckChartPath: clean, relative, portable characters).
func CheckDefinitionPath(s string) error {
	if s == "" {
		return fmt.Errorf("a path is required, e.g. %s/postgres.yaml", DefinitionsDir)
	}
	if err := CheckChartPath(s); err != nil {
		return err
	}
	name, ok := strings.CutPrefix(s, DefinitionsDir+"/")
	switch {
	case !ok || name == "" || strings.Contains(name, "/"):
		return fmt.Errorf("must be a file directly in %s/, e.g. %s/postgres.yaml", DefinitionsDir, DefinitionsDir)
	case !IsDefinitionFileName(name):
		return fmt.Errorf("must end in .yaml or .yml")
	}
	return nil
}

// Document is one YAML document of a multi-document file.
type Document struct {
	// Line is the line of the file the document starts on: 1 for the
	// first, the line of its "---" separator for the others. Data starts
	// on that line, so a line n of Data is line Line+n-1 of the file.
	Line int
	Data []byte
}

var documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// SplitDocuments splits a multi-document YAML file at its "---" lines,
// dropping the documents that hold nothing but comments and blank lines.
func SplitDocuments(data []byte) []Document {
	var out []Document
	start, line := 0, 1
	emit := func(end int) {
		doc := data[start:end]
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			out = append(out, Document{Line: line, Data: doc})
		}
	}
	for _, m := range documentSeparator.FindAllIndex(data, -1) {
		emit(m[0])
		line += bytes.Count(data[start:m[1]], []byte("\n"))
		start = m[1]
	}
	emit(len(data))
	return out
}

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// DecodeDefinitionFile decodes the documents of the definition file path
// (SplitDocuments) into objects, in file order. Decoding is strict about
// YAML (a duplicate key is an error) and each document must be a mapping;
// what the objects are is CheckDefinitions' business. Every document that
// does not decode is reported, as "<path>, document <n> (line <l>): ...",
// n counting the file's non-empty documents from 1.
func DecodeDefinitionFile(path string, data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	var errs []error
	for i, doc := range SplitDocuments(data) {
		obj, err := decodeDocument(doc.Data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s, document %d (line %d): %w", path, i+1, doc.Line, err))
			continue
		}
		objs = append(objs, obj)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return objs, nil
}

func decodeDocument(doc []byte) (*unstructured.Unstructured, error) {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var obj map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &obj); err != nil || obj == nil {
		return nil, errors.New("not a YAML mapping: want an object with apiVersion, kind and metadata")
	}
	return &unstructured.Unstructured{Object: obj}, nil
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
