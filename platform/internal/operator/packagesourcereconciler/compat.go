package packagesourcereconciler

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/conformance"
	"cozystack.io/contracts/valuesschema"
	"cozystack.io/platform/internal/appcount"
	"cozystack.io/platform/internal/appschema"
	"cozystack.io/platform/internal/operator/adinstaller"
	"cozystack.io/platform/internal/operator/names"
	"cozystack.io/platform/internal/status"
)

// StoredValues is one existing application's values as its HelmRelease
// stores them (spec.values, JSON; nil for none).
type StoredValues struct {
	Namespace, Name string
	Values          []byte
}

// KeyChange is one key of spec.values that existing applications set and
// a new schema no longer accepts.
type KeyChange struct {
	// Path is the key as a values path, in the form K4 findings name keys
	// (maxMemory, resources.limit, users.*.password, list.[].name).
	Path string
	// RenamedTo is the key's new path when the new schema declares the
	// same subschema under another name at the same place
	// (conformance.RenamedKeys), else "".
	RenamedTo string
	// Problem says why the stored value fails: "no longer declared", or
	// the validator's message (a narrowed type, enum, bound; a new
	// required key).
	Problem string
	// Applications counts the applications whose values fail at Path.
	Applications int
}

func (k KeyChange) String() string {
	switch {
	case k.RenamedTo != "":
		return fmt.Sprintf("%s renamed to %s", k.Path, k.RenamedTo)
	case k.Problem == problemUndeclared:
		return k.Path + " " + problemUndeclared
	}
	return k.Path + ": " + k.Problem
}

const problemUndeclared = "no longer declared"

// maxKeys bounds the keys an Incompatibility names in a message.
const maxKeys = 5

// maxProblem bounds one validator message in a condition.
const maxProblem = 120

// Incompatibility is an installed kind whose new schema would no longer
// accept the values some of its applications store.
type Incompatibility struct {
	// Definition is the installed ApplicationDefinition serving Kind.
	Definition, Kind string
	// Keys are the failing keys, by path.
	Keys []KeyChange
	// Namespaces counts the affected applications per namespace.
	Namespaces map[string]int
}

func (i Incompatibility) String() string {
	keys := make([]string, 0, min(len(i.Keys), maxKeys)+1)
	for n, k := range i.Keys {
		if n == maxKeys {
			keys = append(keys, fmt.Sprintf("and %d more keys", len(i.Keys)-n))
			break
		}
		keys = append(keys, k.String())
	}
	return fmt.Sprintf("kind %s (ApplicationDefinition %s): %s, stored by %s",
		i.Kind, i.Definition, strings.Join(keys, ", "), appcount.Describe(i.Namespaces))
}

// DescribeIncompatible joins kinds for a condition message.
func DescribeIncompatible(kinds []Incompatibility) string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k.String()
	}
	return strings.Join(parts, "; ")
}

// CheckValues compares the values stored by apps, existing applications
// of one kind, with newSchema, the openAPISchema of the kind in a new
// revision, oldSchema being the one served now. An application is
// affected when its values (without the platform's top-level keys
// beginning with "_", contract K1) would no longer be accepted as
// cozystack-api accepts a spec (package appschema): a key the new schema
// does not declare (Schema.UnknownFields, the structural rule), or values
// that fail Schema.Validate once pruned and defaulted. What the old schema
// already refused is not the new revision's doing and is not counted.
// Renamed keys are found by K4's rule (conformance.RenamedKeys). It
// returns the failing keys sorted by path, and the affected applications
// per namespace; none when every application's values pass. A new schema
// that does not compile is not judged here: cozystack-api reports it on
// the ApplicationDefinition. The rule is docs/operator/catalogs.md, "Catalog delivery".
func CheckValues(oldSchema, newSchema string, apps []StoredValues) ([]KeyChange, map[string]int) {
	if oldSchema == newSchema {
		return nil, nil
	}
	cur, err := appschema.Compile(newSchema)
	if err != nil {
		return nil, nil
	}
	prev, _ := appschema.Compile(oldSchema) // nil: nothing to discount
	renames := map[string]string{}
	if prev != nil {
		renames = conformance.RenamedKeys(prev.Raw(), cur.Raw())
	}
	keys := map[string]*KeyChange{}
	namespaces := map[string]int{}
	for _, app := range apps {
		values := map[string]any{}
		if len(app.Values) > 0 {
			// utiljson keeps integers int64, as cozystack-api reads them.
			if err := utiljson.Unmarshal(app.Values, &values); err != nil {
				continue // not an object: cozystack-api cannot read it either
			}
		}
		for k := range values {
			if valuesschema.IsPlatformKey(k) {
				delete(values, k)
			}
		}
		found := problems(cur, values)
		if prev != nil {
			for path := range problems(prev, values) {
				delete(found, path)
			}
		}
		if len(found) == 0 {
			continue
		}
		namespaces[app.Namespace]++
		for path, problem := range found {
			k := keys[path]
			if k == nil {
				k = &KeyChange{Path: path, Problem: problem}
				if problem == problemUndeclared {
					k.RenamedTo = renames[path]
				}
				keys[path] = k
			}
			k.Applications++
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	out := make([]KeyChange, 0, len(keys))
	for _, k := range keys {
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, namespaces
}

// problems returns what schema s refuses in values, by values path.
func problems(s *appschema.Schema, values map[string]any) map[string]string {
	out := map[string]string{}
	for _, p := range s.UnknownFields(values) {
		out[valuesPath(p)] = problemUndeclared
	}
	spec := runtime.DeepCopyJSON(values)
	s.Prune(spec)
	s.Default(spec)
	for _, e := range s.Validate(spec) {
		path := valuesPath(e.Field)
		if _, ok := out[path]; ok {
			continue
		}
		msg := e.ErrorBody()
		if len(msg) > maxProblem {
			msg = msg[:maxProblem] + "…"
		}
		out[path] = msg
	}
	return out
}

// valuesPath turns a field path of appschema (spec.users[alice].pass,
// spec.list[0].name) into the values path K4 findings use
// (users.*.pass, list.[].name).
func valuesPath(p string) string {
	p = strings.TrimPrefix(p, "spec")
	var parts []string
	for len(p) > 0 {
		switch p[0] {
		case '.':
			p = p[1:]
		case '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				parts, p = append(parts, p), ""
				continue
			}
			if _, err := strconv.Atoi(p[1:end]); err == nil {
				parts = append(parts, "[]")
			} else {
				parts = append(parts, "*")
			}
			p = p[end+1:]
		default:
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			parts, p = append(parts, p[:end]), p[end:]
		}
	}
	if len(parts) == 0 {
		return "the root"
	}
	return strings.Join(parts, ".")
}

// incompatible returns the kinds that installing objs for PackageSource
// source would break for existing applications: for each
// ApplicationDefinition of objs whose kind an ApplicationDefinition the
// source installed serves with another openAPISchema, CheckValues on the
// values of the kind's applications (their HelmReleases, found by the
// label v1alpha1.LabelApplicationKind as adinstaller.InUse finds them,
// read through reader: uncached, across namespaces, a page at a time).
// The result is sorted by kind.
func incompatible(ctx context.Context, c client.Reader, reader client.Reader, source string, objs []*unstructured.Unstructured) ([]Incompatibility, error) {
	next := map[string]string{}
	for _, o := range objs {
		if o.GroupVersionKind() != adinstaller.InstalledKinds[0] {
			continue
		}
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "application", "kind")
		schema, _, _ := unstructured.NestedString(o.Object, "spec", "application", "openAPISchema")
		next[kind] = schema
	}
	var installed v1alpha1.ApplicationDefinitionList
	if err := c.List(ctx, &installed, client.MatchingLabels{names.LabelPackageSource: names.LabelValue(source)}); err != nil {
		return nil, fmt.Errorf("list the ApplicationDefinitions of PackageSource %s: %w", source, err)
	}
	var out []Incompatibility
	for _, ad := range installed.Items {
		kind := ad.Spec.Application.Kind
		schema, kept := next[kind]
		if kind == "" || !kept || schema == ad.Spec.Application.OpenAPISchema || ad.Annotations[names.AnnotationPackageSource] != source {
			continue
		}
		var apps []StoredValues
		opts := []client.ListOption{client.MatchingLabels{v1alpha1.LabelApplicationKind: kind}, client.Limit(500)}
		for cont := ""; ; {
			var page helmv2.HelmReleaseList
			if err := reader.List(ctx, &page, append(opts, client.Continue(cont))...); err != nil {
				return nil, fmt.Errorf("read the values of the applications of kind %s: %w", kind, err)
			}
			for _, hr := range page.Items {
				sv := StoredValues{Namespace: hr.Namespace, Name: hr.Name}
				if hr.Spec.Values != nil {
					sv.Values = hr.Spec.Values.Raw
				}
				apps = append(apps, sv)
			}
			if cont = page.Continue; cont == "" {
				break
			}
		}
		keys, namespaces := CheckValues(ad.Spec.Application.OpenAPISchema, schema, apps)
		if len(keys) > 0 {
			out = append(out, Incompatibility{Definition: ad.Name, Kind: kind, Keys: keys, Namespaces: namespaces})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out, nil
}

// incompatibleResult is the status of revision a, refused because
// existing applications store values its schemas no longer accept
// (kinds): what breaks, and the three ways on.
func incompatibleResult(a *artifact.Artifact, kinds []Incompatibility) status.Result {
	return status.Result{State: status.StateStalled, Reason: v1alpha1.ReasonIncompatibleValues, Message: fmt.Sprintf(
		"revision %s no longer accepts values existing applications store: %s; nothing of it was installed and the served kinds stay. "+
			`Fix one of: the catalog keeps each old key one more version with "deprecated": true and maps it in its chart (contracts/schemas/v1alpha1/k4-values.md, "Across versions"); `+
			"the tenants remove the keys from those applications; or set spec.approvedIncompatibleRevision to %s to install it anyway (those applications then fail their next upgrade)",
		a.Revision(), DescribeIncompatible(kinds), a.Manifest.Digest)}
}
