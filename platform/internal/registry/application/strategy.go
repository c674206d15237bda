package application

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	corelisters "k8s.io/client-go/listers/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"k8s.io/apiserver/pkg/warning"

	"cozystack.io/contracts/valuesschema"
	"cozystack.io/platform/internal/apiserver/appkinds"
	operatornames "cozystack.io/platform/internal/operator/names"
)

// strategy is what one kind's applications must be, as apiextensions'
// customResourceStrategy is for a custom resource: it prepares the object
// of a create or an update (PrepareForCreate, PrepareForUpdate: system
// fields, generated names) and validates it (validateCreate,
// validateUpdate). The verbs (create.go, update.go) run the flow and write
// the HelmRelease; the strategy writes nothing.
type strategy struct {
	kind *appkinds.Kind
	// client reads the objects owner references name and the tenant
	// namespaces (Namespace objects) a Tenant's release makes.
	client client.Client
	// authorizer checks owner references with the requester's rights.
	authorizer authorizer.Authorizer
	// ns tells a namespace's tenant labels (validateHosts,
	// validateTenantNamespace); nil when the server runs without it.
	ns corelisters.NamespaceLister
	// rootChildTenants bounds the child Tenants of a namespace no Tenant
	// renders (validateChildTenants); 0 is DefaultRootChildTenants.
	rootChildTenants int
	// restorers may set restore-only fields (validateRestoreOnly).
	restorers []string
}

// PrepareForCreate clears what a create may not set (the system fields:
// kube-apiserver sets them on the HelmRelease; the managedFields the
// request handler computed are the application's own and stay) and, for
// metadata.generateName, picks a name that fits the kind.
func (s *strategy) PrepareForCreate(app *unstructured.Unstructured) {
	rest.WipeObjectMetaSystemFields(app)
	app.SetResourceVersion("")
	app.SetGeneration(0)
	if app.GetName() == "" && app.GetGenerateName() != "" {
		app.SetName(s.generateName(app.GetGenerateName()))
	}
}

// PrepareForUpdate takes the system fields from the stored object old, as
// rest.BeforeUpdate does; resourceVersion, when the request leaves it out,
// is current's (the stored HelmRelease's: an unconditional update).
func (s *strategy) PrepareForUpdate(app, old *unstructured.Unstructured, currentResourceVersion string) {
	app.SetGeneration(old.GetGeneration())
	if app.GetUID() == "" {
		app.SetUID(old.GetUID())
	}
	app.SetCreationTimestamp(old.GetCreationTimestamp())
	if old.GetDeletionTimestamp() != nil {
		app.SetDeletionTimestamp(old.GetDeletionTimestamp())
	}
	if app.GetResourceVersion() == "" {
		app.SetResourceVersion(currentResourceVersion)
	}
}

var (
	metadataPath = field.NewPath("metadata")
	specPath     = field.NewPath("spec")
)

// validateCreate validates a new application: metadata (the kind's name
// rules, labels, annotations, owner references, finalizers), the metadata
// the platform reserves (validateReservedMetadata), owner references with
// the requester's rights (validateOwnerReferences), the spec (see
// validateSpec), its hosts (validateHosts) and its restore-only fields
// (validateRestoreOnly); for a Tenant also its effective host, its quotas
// and its parent's number of child Tenants (validateTenantHost,
// validateTenantQuotas, validateChildTenants, contract K2). It prunes
// unknown spec fields from app unless the directive rejects them.
func (s *strategy) validateCreate(ctx context.Context, app *unstructured.Unstructured, directive string) field.ErrorList {
	errs := validation.ValidateObjectMetaAccessor(app, true, s.validateName, metadataPath)
	errs = append(errs, validateReservedMetadata(s.kind, app, nil)...)
	errs = append(errs, s.validateOwnerReferences(ctx, app, nil)...)
	errs = append(errs, s.validateSpec(ctx, app, nil, directive)...)
	errs = append(errs, s.validateHosts(app, nil)...)
	errs = append(errs, s.validateTenantHost(ctx, app, nil)...)
	errs = append(errs, s.validateTenantQuotas(ctx, app, nil)...)
	errs = append(errs, s.validateChildTenants(ctx, app)...)
	errs = append(errs, s.validateRestoreOnly(ctx, app, nil)...)
	return append(errs, s.validateTenantNamespace(ctx, app)...)
}

// validateUpdate validates app replacing old: immutable metadata (name,
// namespace, uid, creationTimestamp), then as on create. Names are not
// checked again: they cannot change.
func (s *strategy) validateUpdate(ctx context.Context, app, old *unstructured.Unstructured, directive string) field.ErrorList {
	errs := validation.ValidateObjectMetaAccessorUpdate(app, old, metadataPath)
	errs = append(errs, validation.ValidateFinalizers(app.GetFinalizers(), metadataPath.Child("finalizers"))...)
	errs = append(errs, validateReservedMetadata(s.kind, app, old)...)
	errs = append(errs, s.validateOwnerReferences(ctx, app, old)...)
	errs = append(errs, s.validateSpec(ctx, app, old, directive)...)
	errs = append(errs, s.validateTenantHost(ctx, app, old)...)
	errs = append(errs, s.validateTenantQuotas(ctx, app, old)...)
	errs = append(errs, s.validateRestoreOnly(ctx, app, old)...)
	return append(errs, s.validateHosts(app, old)...)
}

// validateName is the kind's name rule (a DNS-1035 label short enough for
// <prefix><name> to be a Helm release name, K1) and no release name
// cozystack-operator reserves for Package components
// (operatornames.ReservedRelease); a generateName prefix only has to be a
// DNS-1035 label prefix, as generateName truncates it to fit.
func (s *strategy) validateName(name string, prefix bool) []string {
	if prefix {
		return validation.NameIsDNS1035Label(name, true)
	}
	if msgs := s.kind.ValidateName(name); len(msgs) > 0 {
		return msgs
	}
	if release := s.kind.HelmReleaseName(name); operatornames.ReservedRelease(release) {
		return []string{fmt.Sprintf("its HelmRelease name %s holds \"--\" and ten hex digits, the form reserved for the releases of Package components (contract K1, Metadata the platform owns); choose another name", release)}
	}
	return nil
}

// generatedSuffixLength is what names.SimpleNameGenerator appends.
const generatedSuffixLength = utilvalidation.DNS1035LabelMaxLength - names.MaxGeneratedNameLength

// generateName appends random characters to base, first shortening base so
// the result fits the kind's maximum name length (the generator itself only
// knows Kubernetes' 63).
func (s *strategy) generateName(base string) string {
	if limit := max(s.kind.MaxNameLength-generatedSuffixLength, 0); len(base) > limit {
		base = base[:limit]
	}
	// A random suffix may complete a reserved release name; a base that
	// makes every name reserved is refused by validateName.
	name := names.SimpleNameGenerator.GenerateName(base)
	for i := 0; i < 8 && operatornames.ReservedRelease(s.kind.HelmReleaseName(name)); i++ {
		name = names.SimpleNameGenerator.GenerateName(base)
	}
	return name
}

// validateSpec checks app's spec and leaves in app the spec to store:
//   - top-level keys beginning with "_" are forbidden: the platform injects
//     them (K1) and FromHelmRelease hides them;
//   - unknown fields (appschema's structural rule) new in the request
//     follow its field validation directive as for custom resources:
//     "Strict" rejects them, "Warn" (and "", the Kubernetes default)
//     prunes them with a Warning header, "Ignore" prunes them silently;
//   - on update, a field the stored object holds that the kind's schema no
//     longer declares (a catalog upgrade removed or renamed its key) is
//     never pruned, whatever the directive: a spec still carrying it is
//     refused (storedKeyError), one carrying it as null drops it, one
//     without it stores without it (contract K4, "Stored values",
//     contracts/schemas/v1alpha1/k4-values.md);
//   - the spec with schema defaults applied must validate against the
//     kind's schema, while the stored spec stays the user's (no defaults);
//   - its x-kubernetes-validations (CEL) hold, transition rules against the
//     current object on update, with ratcheting (appschema.ValidateRules);
//   - deprecated fields get a Warning header each, which kubectl prints.
func (s *strategy) validateSpec(ctx context.Context, app, old *unstructured.Unstructured, directive string) field.ErrorList {
	var spec map[string]any
	switch v := app.Object["spec"].(type) {
	case nil:
		spec = map[string]any{}
	case map[string]any:
		spec = v
	default:
		return field.ErrorList{field.Invalid(specPath, v, "must be an object")}
	}
	var errs field.ErrorList
	for _, key := range sortedKeys(spec) {
		if valuesschema.IsPlatformKey(key) {
			errs = append(errs, field.Forbidden(specPath.Child(key),
				`top-level keys beginning with "_" are reserved for values the platform injects`))
			delete(spec, key)
		}
	}
	stored := map[string]bool{}
	if old != nil {
		if oldSpec, ok := old.Object["spec"].(map[string]any); ok {
			for _, p := range s.kind.Schema.UnknownFields(oldSpec) {
				stored[p] = true
			}
		}
	}
	for _, u := range s.kind.Schema.Unknown(spec) {
		p := u.Path.String()
		switch {
		case stored[p]:
			if u.Value != nil {
				errs = append(errs, storedKeyError(s.kind, app, u))
			}
		case directive == metav1.FieldValidationIgnore:
		case directive == metav1.FieldValidationStrict:
			errs = append(errs, field.Forbidden(u.Path, "unknown field"))
		default:
			warning.AddWarning(ctx, "", fmt.Sprintf("unknown field %q", p))
		}
	}
	s.kind.Schema.Prune(spec)
	app.Object["spec"] = spec

	defaulted := runtime.DeepCopyJSON(spec)
	s.kind.Schema.Default(defaulted)
	errs = append(errs, s.kind.Schema.Validate(defaulted)...)
	// x-kubernetes-validations see both sides defaulted: old is the
	// stored object as read (fromHelmRelease applies the defaults), so it
	// is passed as it is, read-only.
	var oldSpec map[string]any
	if old != nil {
		oldSpec, _ = old.Object["spec"].(map[string]any)
	}
	errs = append(errs, s.kind.Schema.ValidateRules(ctx, defaulted, oldSpec)...)
	for _, msg := range s.kind.Schema.Deprecated(spec) {
		warning.AddWarning(ctx, "", msg)
	}
	return errs
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

var objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

// tableColumns are the columns kubectl get shows (metav1.Table
// conventions: CamelCase names, kubectl prints them upper-case).
var tableColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]},
	{Name: "Ready", Type: "string", Description: "Status of the Ready condition: True once helm-controller has installed or upgraded the release."},
	{Name: "Status", Type: "string", Description: "Message of the Ready condition."},
	{Name: "Version", Type: "string", Description: "Chart version of the last release attempt (status.version)."},
	{Name: "Age", Type: "string", Description: objectMetaDoc["creationTimestamp"]},
}

// ConvertToTable renders one application or a <Kind>List as a
// metav1.Table: Name, Ready (the Ready condition's status), Status (its
// message), Version (status.version) and Age (human duration since
// creation). Each row carries its object; tableOptions.NoHeaders drops the
// column definitions.
func (r *REST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	if opt, ok := tableOptions.(*metav1.TableOptions); !ok || opt == nil || !opt.NoHeaders {
		table.ColumnDefinitions = tableColumns
	}
	if apimeta.IsListType(object) {
		if l, err := apimeta.ListAccessor(object); err == nil {
			table.ResourceVersion = l.GetResourceVersion()
			table.Continue = l.GetContinue()
			table.RemainingItemCount = l.GetRemainingItemCount()
		}
	} else if m, err := apimeta.Accessor(object); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	var err error
	table.Rows, err = metatable.MetaToTableRow(object, func(obj runtime.Object, _ metav1.Object, name, age string) ([]any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("not a %s object: %T", r.kind.Kind, obj)
		}
		ready, message := readyCondition(u)
		version, _, _ := unstructured.NestedString(u.Object, "status", "version")
		return []any{name, ready, message, version, age}, nil
	})
	if err != nil {
		return nil, err
	}
	return table, nil
}

// readyCondition returns the status and message of the Ready condition in
// the application's status.
func readyCondition(u *unstructured.Unstructured) (status, message string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != meta.ReadyCondition {
			continue
		}
		status, _ = m["status"].(string)
		message, _ = m["message"].(string)
		return status, message
	}
	return "", ""
}
