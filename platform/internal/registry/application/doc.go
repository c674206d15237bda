// Package application is the storage of one application kind of the
// apps.cozystack.io API (contract K1, contracts/schemas/v1alpha1/k1-application.md):
// objects are stored as Flux HelmReleases, with no other store, written
// with cozystack-api's own credentials and converted back on read, so
// resourceVersion, list, watch and conflict semantics are
// kube-apiserver's own for the HelmRelease.
//
// One file per verb, as k8s.io/apiserver's generic registry reads:
//
//   - storage.go: REST (one per served kind, NewREST) and Backend, the
//     shared reads (getHelmRelease, fromHelmRelease);
//   - get.go, list.go, watch.go, create.go, update.go (with its retry loop
//     and preconditions), delete.go (with DeleteCollection);
//   - errors.go: HelmRelease errors rewritten to name the application;
//   - strategy.go: strategy, what an application must be, as
//     apiextensions' customResourceStrategy is for a custom resource
//     (PrepareForCreate, PrepareForUpdate, validateCreate, validateUpdate,
//     names), with the rules of metadata.go, owners.go, hosts.go,
//     tenants.go and storedkeys.go (stored keys a schema change left
//     undeclared), and ConvertToTable;
//   - convert.go: HelmRelease <-> application (ToHelmRelease,
//     FromHelmRelease, Status).
//
// The list path is the performance layer (docs/tenant/applications.md, "What a tenant may
// send", and the benchmarks in platform/internal/apiserver): releaselister.go
// streams a HelmRelease list from kube-apiserver without decoding
// unchanged items, releasecache.go serves lists that may come from a cache
// (resourceVersion "0"), memo.go keeps each converted item's JSON per
// HelmRelease resourceVersion, and encodedlist.go's List carries those
// bytes to the response writer (platform/internal/apiserver/scheme.go).
// A List's decoded items can only be reached through its
// runtime.Unstructured methods, which decode them first.
package application
