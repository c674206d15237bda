package services_test

import (
	"testing"

	"cozystack.io/contracts/conformance"
)

// The catalog conforms to the contracts (K1–K6) of every platform release
// that accepts it (contracts/conformance; the same checks as
// `cozypkg conformance catalogs/services --platform-version 0.1.0`).
// A copy of the catalog that declares a newer minPlatformVersion than the
// platform fails, with one finding saying so (refuses-newer-minPlatformVersion).
func TestConformance(t *testing.T) { conformance.RunCatalogTests(t, ".") }
