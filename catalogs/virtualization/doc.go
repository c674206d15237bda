// Package virtualization is the virtualization catalog: virtual machines,
// their disks, private networks and tenant Kubernetes clusters, and the
// operators that run them, shipped as one OCI artifact (format:
// contracts/artifact/README.md). catalog.yaml declares it,
// applicationdefinitions/ holds its kinds (K1, K6), charts/ its application
// and operator charts, crds.yaml where the operators' CRDs come from
// (cmd/sync-crds, `make crds`). README.md in this directory describes it.
// The package has no code besides its tests.
//
// The tests of the catalog as a whole: catalog.yaml is valid and builds
// into an OCI artifact, every ApplicationDefinition decodes strictly and
// agrees with its chart and with catalog.yaml, the operator charts' CRDs
// are what their pinned sources give and install on a real API server,
// and the catalog conforms to the contracts (contracts/conformance).
package virtualization
