// Package charts holds the platform's Helm charts: cozy-lib, the library
// chart of contract K5 (contracts/schemas/v1alpha1/k5-cozy-lib.md), which
// catalogs depend on as a published OCI chart and vendor (`make cozy-lib`,
// `make vendor-cozy-lib`), and tenant, the chart of the Tenant kind
// (platform/applicationdefinitions), published in the platform's own
// catalog (platform/catalog.yaml). The package has no code besides its
// tests.
//
// The tests: cozy-lib is rendered through testdata/consumer, a chart that
// calls each public helper once: good values give the golden output under
// testdata/golden, a missing or empty required key fails the render with a
// message naming the key, and the helper list of
// contracts/schemas/v1alpha1/k5-cozy-lib.json is exactly the set of
// helpers cozy-lib defines outside cozy-lib.internal. The tenant chart has
// value cases in testdata/cases/tenant/<case>.yaml: TestTenantGolden
// renders them to testdata/golden/tenant/<case>.yaml (go test -update
// rewrites them), and TestInjection writes payloads that start a new
// manifest into every string field and map key of its values schema and
// checks that the release's objects stay the same (charttest.RunInjection).
package charts
