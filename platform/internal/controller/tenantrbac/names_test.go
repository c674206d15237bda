package tenantrbac

import (
	"testing"

	"cozystack.io/platform/internal/registry/application"
)

// The namespace a Tenant renders is derived here as cozystack-api derives
// it (application.TenantNamespace, the tenant chart's _names.tpl).
func TestChildNamespaceIsTenantNamespace(t *testing.T) {
	for _, parent := range []string{"tenant-root", "tenant-a", "tenant-a-b"} {
		for _, name := range []string{"x", "a-b"} {
			if got, want := childNamespace(parent, name), application.TenantNamespace(parent, name); got != want {
				t.Errorf("childNamespace(%s, %s) = %s, want %s", parent, name, got, want)
			}
		}
	}
	if tenantKind != application.TenantKind {
		t.Errorf("tenantKind %s, want %s", tenantKind, application.TenantKind)
	}
}
