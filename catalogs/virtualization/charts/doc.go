// Package charts holds the Helm charts of the virtualization catalog: the
// application charts (vm-instance, vm-disk, vpc, kubernetes) and the
// operator charts, described in catalogs/virtualization/README.md. The
// package has no code besides its tests. Each application chart has value
// cases in testdata/cases/<chart>/<case>.yaml (a tenant's spec; the K2
// cluster values are added as valuesFrom adds them):
//
//   - TestGolden renders every case to testdata/golden/<chart>/<case>.yaml
//     (go test -update rewrites them);
//   - TestDryRun creates every rendered object with server-side dry-run and
//     strict field validation on the local control plane, after installing
//     the upstream CRDs from ../shared/crds/upstream and, for the kinds
//     they lack (KubevirtCluster, KubevirtMachineTemplate,
//     KubeadmConfigTemplate, ...), the CRDs the operator charts ship;
//   - TestLint runs Helm's linter on every chart;
//   - TestSchemaStrict checks that every values schema rejects an unknown
//     key at every object level (K4), with santhosh-tekuri/jsonschema and
//     with Helm's own validation on render;
//   - TestInjection writes payloads that start a new manifest into every
//     string field and map key of each values schema and checks that the
//     release's objects stay the same (charttest.RunInjection);
//   - TestOperators renders, lints and dry-runs the operator charts.
package charts
