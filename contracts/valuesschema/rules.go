package valuesschema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Rules are the x-kubernetes-validations of a values schema (contract K1):
// CEL rules evaluated the way kube-apiserver evaluates them for a custom
// resource, by apiextensions-apiserver's validator over the structural form
// of the schema, with the same cost limits, transition rules (oldSelf) on
// update, and validation ratcheting (an error on a value the update did not
// change is not reported, as for CRDs since Kubernetes 1.30).
type Rules struct {
	structural *structuralschema.Structural
	validator  *cel.Validator
}

// RuleError reports x-kubernetes-validations that cannot run: a schema
// that has no structural form, or a rule that does not compile.
type RuleError struct{ Err error }

func (e *RuleError) Error() string {
	return "spec.application.openAPISchema: x-kubernetes-validations: " + e.Err.Error()
}

func (e *RuleError) Unwrap() error { return e.Err }

// CompileRules returns the rules of doc, an openAPISchema document, or nil
// when it declares none. Errors are *RuleError: a schema with rules but no
// structural form, or a rule that does not compile (each named by its
// field path, e.g. "spec.storageClass: rule 0 ...").
func CompileRules(doc string) (*Rules, error) {
	if !strings.Contains(doc, "x-kubernetes-validations") {
		return nil, nil
	}
	var raw map[string]any
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, &RuleError{Err: fmt.Errorf("the schema is not a JSON object: %w", err)}
	}
	// The rules run on the schema the kind publishes, as kube-apiserver
	// runs a CRD's on its OpenAPI schema.
	v1, err := OpenAPI(raw)
	if err != nil {
		return nil, &RuleError{Err: fmt.Errorf("the schema has no OpenAPI v3 form, which CEL rules need: %w", err)}
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, &internal, nil); err != nil {
		return nil, &RuleError{Err: err}
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, &RuleError{Err: fmt.Errorf("the schema has no structural form (a type on every node), which CEL rules need: %w", err)}
	}
	if errs := compileAll(s, field.NewPath("spec")); len(errs) > 0 {
		return nil, &RuleError{Err: errors.Join(errs...)}
	}
	v := cel.NewValidator(s, false, celconfig.PerCallLimit)
	if v == nil {
		return nil, nil
	}
	return &Rules{structural: s, validator: v}, nil
}

// compileAll compiles every rule of s and its descendants, so that a rule
// that cannot run disables the kind when its AD is read, not each request.
func compileAll(s *structuralschema.Structural, path *field.Path) []error {
	if s == nil {
		return nil
	}
	var errs []error
	if len(s.XValidations) > 0 {
		results, err := cel.Compile(s, model.SchemaDeclType(s, false), celconfig.PerCallLimit,
			environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), cel.NewExpressionsEnvLoader())
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		}
		for i, r := range results {
			if r.Error != nil {
				errs = append(errs, fmt.Errorf("%s: rule %d %q: %s", path, i, s.XValidations[i].Rule, r.Error.Detail))
			}
		}
	}
	for name := range s.Properties {
		p := s.Properties[name]
		errs = append(errs, compileAll(&p, path.Child(name))...)
	}
	errs = append(errs, compileAll(s.Items, path.Index(0))...)
	if s.AdditionalProperties != nil {
		errs = append(errs, compileAll(s.AdditionalProperties.Structural, path.Key("*"))...)
	}
	return errs
}

// Validate evaluates the rules on spec; old is the current spec on update,
// nil on create (rules with oldSelf are then skipped, as for CRDs). Both
// should have their defaults applied. Errors are rooted at "spec". A nil
// Rules has no rules.
func (r *Rules) Validate(ctx context.Context, spec, old map[string]any) field.ErrorList {
	if r == nil {
		return nil
	}
	var opts []cel.Option
	var oldObj any
	if old != nil {
		oldObj = old
		opts = append(opts, cel.WithRatcheting(common.NewCorrelatedObject(spec, old, &model.Structural{Structural: r.structural})))
	}
	errs, _ := r.validator.Validate(ctx, field.NewPath("spec"), r.structural, spec, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return errs
}
