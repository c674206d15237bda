// Package conformance checks a catalog against the contracts K1–K7 of a
// platform version (contracts/schemas/README.md and the documents of
// contracts/schemas/v1alpha1; the rules: docs/catalog-author/conformance.md, "Contracts and
// conformance"), the way
// `cozypkg conformance` and the catalogs' own tests run it.
//
// Static checks (Check, CheckADFiles) read a catalog directory or a pulled
// artifact (LoadDir, LoadArtifact) and return a Report of Findings, each
// with a rule ID, a severity, the file and line or object path, a message
// and the fix. Rules lists every rule. Live checks (Live) install the
// catalog's ApplicationDefinitions on a cluster where cozystack-api
// serves, then create, read and delete one object of each kind. Run is the
// harness a catalog calls from its tests:
//
//	func TestConformance(t *testing.T) { conformance.Run(t, ".", "0.1.0") }
//
// The template rules evaluate a chart's templates statically
// (templates.go and k4strings.go, two Visitors of the walk of
// contracts/helmtemplate): which _cluster and
// _namespace keys they read (K2-unknown-key, K2-unknown-object), and
// whether they print a string of the values that its schema leaves free
// without quoting it (K4-unquoted-string: values followed through
// variables, range, with, index, dict and list, toYaml/fromYaml, and the
// defines they include, from the chart and its dependencies).
//
// K4-application-rights renders each application chart as Helm installs it
// (k4render.go: its defaults and K2 values, its crds/; k4kinds.go maps each
// kind to its resource and scope) and checks (k4rights.go) every object
// against what the release's installer may create: namespaced, in
// the release's namespace, of a resource the application's rules in
// catalog.yaml grant with the verbs Helm uses, and those rules grant what
// Helm's readiness wait reads for it (a Deployment's ReplicaSets).
//
// CAT-definitions (definitions.go) runs artifact.CheckDefinitions, the
// check cozypkg build and the operator make of the definitions and tenant
// roles, and K5-pin artifact.CheckCozyLibPin, which build applies too: a
// catalog that passes conformance is not refused by build for them.
//
// The checks read only this module's embedded contract files, so a result
// depends on the catalog, the platform version and the contracts module's
// version alone (Report.ContractDigest names the snapshot).
package conformance
