// Package v1alpha1 holds the cozystack.io/v1alpha1 types that cross the seam
// between the platform and the catalogs: ApplicationDefinition (contract K1),
// PackageSource and Package (catalog delivery; the artifact format they read
// is cozystack.io/contracts/artifact), and the cluster values (K2).
//
// The CRDs under contracts/crds/ are generated from these types
// (`make generate`); a test fails when they are stale.
//
// +kubebuilder:object:generate=true
// +groupName=cozystack.io
package v1alpha1
