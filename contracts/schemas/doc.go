// Package schemas holds the JSON Schemas (draft 2020-12) of the contracts
// between the platform and the catalogs, one directory per contract
// version, each schema beside a Markdown document of the same base name,
// embedded so that the platform, cozypkg and the conformance suite read the
// same bytes. README.md is the index; versions.go maps platform releases to
// contract versions and defines the compatibility window.
//
// Contract version v1alpha1 (platform 0.1):
//   - K1 the application API: k1-application.schema.json (an
//     ApplicationDefinition, and in $defs/valuesSchema the meta-schema of its
//     openAPISchema with the x-cozystack-* extension keywords);
//   - K2 cluster values: k2-cluster-values.schema.json, the values document
//     projected into every tenant namespace, and the migration from the
//     legacy Secret (k2-migration.md);
//   - K3 properties: k3-properties.json, the properties this version knows,
//     and its schema k3-properties.schema.json;
//   - K4 values schemas: k4-values.schema.json, a meta-schema for a chart's
//     values.schema.json;
//   - K5 cozy-lib: k5-cozy-lib.json, the public helpers, and its schema
//     k5-cozy-lib.schema.json;
//   - K6 dashboard: k6-dashboard.schema.json, AD spec.dashboard.
//
// Every schema's $id is BaseURL + its path here; references between them
// ("k6-dashboard.schema.json" from K1) resolve to the embedded files, never
// to the network.
package schemas
