package applicationdefinitions_test

import (
	"testing"

	"cozystack.io/contracts/conformance"
)

// The platform's own catalog (platform/catalog.yaml: the Tenant chart and
// this package's ADs) conforms to the contracts like any catalog.
func TestPlatformCatalogConformance(t *testing.T) {
	conformance.RunWindow(t, "..")
}
