// Package appschema applies an ApplicationDefinition's openAPISchema (the
// values schema of its chart, contract K1) to application specs: validation
// (JSON Schema draft 2020-12 via santhosh-tekuri/jsonschema, and the CEL
// rules of x-kubernetes-validations as kube-apiserver runs them for custom
// resources), defaulting, unknown-field detection and deprecated-field
// detection. The rules are K1's (contracts/schemas/v1alpha1/
// k1-application.md: spec.application.openAPISchema, "Extension keywords
// of openAPISchema"); those the conformance suite applies too live in
// cozystack.io/contracts/valuesschema.
//
// Unknown fields follow the structural-schema rule of Kubernetes CRDs: a field
// is unknown when its object schema lists `properties` and allows nothing
// else (no `additionalProperties`, no `x-kubernetes-preserve-unknown-fields`).
// An object schema with neither properties nor additionalProperties is a free
// form map, as the upstream ApplicationDefinitions use it. Properties of
// allOf/anyOf/oneOf branches at the same level count as known.
//
// Field paths in results are rooted at "spec", the way kubectl shows them.
package appschema
