// Package valuesschema holds the rules of an application's values schema
// (the ApplicationDefinition's openAPISchema, contract K1,
// contracts/schemas/v1alpha1/k1-application.md) that both sides of the
// contract apply: the application API (cozystack-api) when it defaults a
// spec, and the conformance suite when it checks what the API would store.
// One implementation, so the two cannot drift.
//
// Schemas and values are decoded JSON: map[string]any, []any and scalars.
package valuesschema
