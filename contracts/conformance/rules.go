package conformance

// Rule describes one rule of the suite.
type Rule struct {
	ID string
	// Contract is the contract it checks: K1…K7, REQ (the catalog's
	// requirements), CAT (the catalog's own files) or LIVE (a cluster).
	Contract string
	// Summary says what the rule requires.
	Summary string
}

// Rules lists every rule, in report order of contracts.
var Rules = []Rule{
	{"CAT-catalog", "CAT", "catalog.yaml decodes strictly and passes the artifact format's validation (contracts/artifact)"},
	{"CAT-chart", "CAT", "every chart catalog.yaml names loads, and its templates parse"},
	{"CAT-definitions", "CAT", "the ApplicationDefinitions, their policies and the applications' tenantRoles pass the check cozypkg build and the operator make (artifact.CheckDefinitions): tenant roles name only the plurals of the catalog's own ApplicationDefinitions"},
	{"REQ-min-platform-version", "REQ", "minPlatformVersion is not newer than the platform version checked against"},
	{"REQ-contract-window", "REQ", "the contract version of minPlatformVersion is N-1 or N of the platform's N (schemas.Table.Accepts)"},
	{"K1-decode", "K1", "every ApplicationDefinition file decodes strictly (no unknown or duplicate field)"},
	{"K1-schema", "K1", "every ApplicationDefinition is valid under k1-application.schema.json"},
	{"K1-openapi-schema", "K1", "openAPISchema is a JSON Schema 2020-12 document valid under the K1 meta-schema ($defs/valuesSchema): known x-cozystack-* keywords only, options sources known, on string fields; an OpenAPI v3 form the API publishes (valuesschema.OpenAPI: no $ref, patternProperties)"},
	{"K1-default", "K1", "every default in openAPISchema is valid under its own subschema"},
	{"K1-cel-rule", "K1", "every x-kubernetes-validations rule in openAPISchema compiles (CEL of CRD validation rules, on a structural schema), as the application API evaluates them"},
	{"K1-release-prefix", "K1", "HelmRelease names <prefix><name> of two kinds cannot collide: no empty prefix, no prefix that starts another"},
	{"K1-duplicate", "K1", "no two ApplicationDefinitions share a name, kind or plural"},
	{"K1-catalog-binding", "K1", "a catalog's AD installs one of its applications (release.source = catalog name, release.component = application of the same kind), and the ADs serve exactly provides.applicationKinds"},
	{"K1-chart-schema", "K1", "openAPISchema equals the application chart's values.schema.json without _cluster, _namespace and the dependency keys"},
	{"K2-unknown-key", "K2", "every _cluster/_namespace key a chart reads (.Values._cluster.x, index .Values \"_cluster\" \"x\", cozy-lib readers) is one K2 provides"},
	{"K2-unknown-object", "K2", "charts read no top-level _-prefixed values other than _cluster and _namespace"},
	{"K3-unknown-property", "K3", "every requiredProperties entry is a K3 property the platform's contract version knows"},
	{"K4-schema-missing", "K4", "every application chart has a values.schema.json"},
	{"K4-root", "K4", "a values schema's root is type object with additionalProperties false"},
	{"K4-open-object", "K4", "every object in a values schema rejects unknown keys (additionalProperties false or a map's value schema)"},
	{"K4-platform-keys", "K4", "a values schema admits _cluster and _namespace as open objects ({\"type\": \"object\"})"},
	{"K4-dependency-key", "K4", "a values schema admits each dependency's key (alias, else name)"},
	{"K4-unbounded", "K4", "in an application chart's values schema every string has a maxLength (or an enum, a const, or a pattern anchored at both ends without an unbounded repetition), every map a maxProperties and bounded propertyNames, and every array a maxItems"},
	{"K4-unquoted-string", "K4", "templates print no free string of the values (a string whose schema has no pattern or enum) raw: through quote, toJson, or toYaml/int of a typed value"},
	{"K4-application-rights", "K4", "every object an application chart renders with its defaults is namespaced, in the release's namespace, and of a resource applications[].rules grant with the verbs Helm uses"},
	{"K4-key-removed", "K4", "no key of the previous catalog version's values schema is removed"},
	{"K4-key-renamed", "K4", "no key of the previous catalog version's values schema is renamed"},
	{"K5-pin", "K5", "a chart that includes cozy-lib helpers depends on cozy-lib from an oci:// repository at one exact version"},
	{"K5-pin-version", "K5", "the pinned cozy-lib is not newer than the platform version"},
	{"K5-vendored", "K5", "the pinned cozy-lib archive is vendored in the chart's charts/ directory"},
	{"K5-private-helper", "K5", "charts include no cozy-lib.internal.* helper"},
	{"K5-unknown-helper", "K5", "charts include only the public cozy-lib helpers of k5-cozy-lib.json"},
	{"K7-driver-missing", "K7", "every provides.backupStrategyKinds entry is served by a component of each variant that installs any backup driver, and by one at least (a component's backupStrategyKinds)"},
	{"K7-undeclared-kind", "K7", "a component serves only backup strategy kinds the catalog provides, and no two components of a variant serve one kind"},
	{"K6-dashboard", "K6", "spec.dashboard is present and valid under k6-dashboard.schema.json"},
	{"K6-icon", "K6", "dashboard.icon decodes to an SVG document"},
	{"K6-keys-order", "K6", "every keysOrder path names a field openAPISchema declares"},
	{"K6-keys-order-missing", "K6", "a keysOrder lists every top-level field of openAPISchema"},
	{"LIVE-install", "LIVE", "the catalog's ApplicationDefinitions apply to the cluster"},
	{"LIVE-served", "LIVE", "each AD reaches Served=True and its kind answers in apps.cozystack.io/v1alpha1"},
	{"LIVE-create", "LIVE", "an object of each kind, built from its schema's defaults, is created"},
	{"LIVE-read", "LIVE", "the object reads back with its kind, name and defaulted spec"},
	{"LIVE-helmrelease", "LIVE", "the object is stored as HelmRelease <prefix><name> with the chartRef of its AD and the application labels"},
	{"LIVE-delete", "LIVE", "the object deletes, and its HelmRelease is gone"},
}

// RuleByID returns the rule with id.
func RuleByID(id string) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
