// Package appcount says how many applications of a kind exist and where,
// in the one form cozystack-api (the Served condition of a deleted or
// unserved ApplicationDefinition) and cozystack-operator (a PackageSource's
// KindInUse) both report: Describe (contract K1,
// contracts/schemas/v1alpha1/k1-application.md, "Lifecycle of a kind").
package appcount
