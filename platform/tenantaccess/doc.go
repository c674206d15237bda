// Package tenantaccess holds the platform's cluster-wide objects that make
// tenants a security boundary (contract K5,
// contracts/schemas/v1alpha1/k5-cozy-lib.md, "Tenant roles"): the tenant
// roles cozy:tenant:<level> that catalogs aggregate their kinds into, the
// installer role application releases install as, the Tenant chart's
// identity, and the admission policies that narrow it (roles.yaml,
// policy.yaml), and the policies that say whose a BackupClass is and keep
// the reserved class names for the platform (contract K7, "Kinds";
// backupclass-policy.yaml). cozystack-controller applies them at start (Apply) and
// binds them in every tenant namespace
// (platform/internal/controller/tenantrbac).
package tenantaccess
