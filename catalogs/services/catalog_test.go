package services_test

import (
	"testing"

	"cozystack.io/contracts/conformance"
	"cozystack.io/sdk/charttest"
)

func TestCatalogBuilds(t *testing.T) { conformance.CheckCatalogBuilds(t, ".") }

// The application charts are catalog.yaml applications, published for the
// ADs and never installed by a Package: no variant lists them as
// components, and every application has an AD.
func TestApplicationsAreNotComponents(t *testing.T) {
	conformance.CheckApplicationsAreNotComponents(t, ".", []string{"clickhouse", "kafka", "mariadb", "mongodb", "nats", "postgres", "rabbitmq", "redis"})
}

func TestApplicationDefinitions(t *testing.T) {
	conformance.CheckApplicationDefinitions(t, ".", conformance.ADChecks{
		Singular:      func(name, _ string) string { return name },
		OpenAPISchema: charttest.WithoutReservedKeys,
		Reserved:      charttest.ReservedKeys,
	})
}

// The committed CRDs are what crds.yaml's sources give: the Go module ones
// always; the mirror ones with ../shared/crds/upstream as the mirror, in a
// copy of the catalog (they are not committed).
func TestOperatorCRDs(t *testing.T) { charttest.CheckOperatorCRDs(t, ".") }
