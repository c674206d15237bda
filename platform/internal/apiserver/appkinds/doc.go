// Package appkinds turns ApplicationDefinitions into the set of kinds the
// application API serves (contract K1,
// contracts/schemas/v1alpha1/k1-application.md, "The AD"). Compile checks
// one AD on its own into a Kind (names, schema, Release: how an object
// becomes a HelmRelease); Resolve decides, deterministically, which of
// several ADs wins a contested name, into a Set. A bad AD disables only its
// own kind: it gets Served=False with a reason and a message naming the
// fix (a Failure), and every other kind keeps serving.
package appkinds
