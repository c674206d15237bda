// Package charts holds the Helm charts of the services catalog: the
// application charts (postgres, mariadb, mongodb, redis, kafka, clickhouse,
// rabbitmq, nats), made as catalogs/services/README.md ("How an
// application chart is made") says, and the operator charts. The package
// has no code besides its tests. Each application chart has value cases in
// testdata/cases/<chart>/<case>.yaml (a tenant's spec; the K2 cluster
// values are added as valuesFrom adds them):
//
//   - TestGolden renders every case to testdata/golden/<chart>/<case>.yaml
//     (go test -update rewrites them);
//   - TestDryRun creates every rendered object with server-side dry-run and
//     strict field validation on the local control plane, after installing
//     the upstream CRDs from ../shared/crds/upstream;
//   - TestLint runs Helm's linter on every chart;
//   - TestSchemaStrict checks that every values schema rejects an unknown
//     key at every object level (K4), with santhosh-tekuri/jsonschema and
//     with Helm's own validation on render;
//   - TestInjection writes payloads that start a new manifest into every
//     string field and map key of each values schema and checks that the
//     release's objects stay the same (charttest.RunInjection).
package charts
