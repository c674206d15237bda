// Package applicationdefinitions holds the platform's own application kinds
// (contract K1, contracts/schemas/v1alpha1/k1-application.md): their
// ApplicationDefinitions (tenant.yaml: the Tenant) and the admission
// policies shipped with them (tenant-policy.yaml), embedded so that the
// platform installs them without reading any file at run time (Objects).
// The charts they serve are under platform/charts, published through the
// platform's own catalog (platform/catalog.yaml).
//
// Its tests check the Tenant kind and the tenant security boundary
// against the real API servers (docs/operator/tenants.md, "Tenants: who may do what").
package applicationdefinitions
