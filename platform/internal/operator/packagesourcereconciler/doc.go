// Package packagesourcereconciler is the PackageSource reconciler of
// cozystack-operator (its rules: docs/operator/catalogs.md, "Catalog delivery"; the
// artifact it pulls: contracts/artifact/README.md). Each reconcile of a
// PackageSource runs these steps, numbered alike in Reconcile, one file
// each:
//
//  1. The served revision (served.go): status.artifact, loaded from the
//     operator's store (package store), so that a restart or a failing
//     registry never takes a served chart away.
//  2. A newer revision (fetch.go): spec.oci or spec.layout is resolved and,
//     when the digest is new, the artifact is pulled into the store with
//     every digest, size, the format and every chart archive verified
//     (cozystack.io/contracts/artifact), and the catalog's
//     minPlatformVersion and K3 properties checked against this platform.
//     A revision refused for what it is is not pulled again until the tag
//     or the spec changes.
//  3. The checks of what the revision would install, before anything is
//     published (check.go: one named function per verdict, run in the
//     order of Reconciler.checks, the first refusal deciding): its
//     definitions bound to its own charts, its declarations fitting in
//     the status, its catalog name unique, its CRD groups held
//     by no older source and the groups its rules name its own or shared
//     by a served dependency (apigroups.go), no kind or policy of
//     another owner (adinstaller.Guard: names, policies, overlapping
//     release prefixes), no kind name shadowing a resource the cluster
//     serves (shadow.go, from discovery), and no kind dropped while
//     applications of it exist unless spec.kindRemoval is Terminate
//     (adinstaller.InUse; contract K1, "Lifecycle of a kind"), and no
//     changed schema of a served kind refusing the values its existing
//     applications store unless spec.approvedIncompatibleRevision names
//     the revision's digest (compat.go, CheckValues).
//  4. Publish, then install (publish.go): the revision's charts are
//     served (package artifactserver) with one ExternalArtifact per
//     application and per component a Package of the source enables
//     (demand.go) in cozy-system, named
//     v1alpha1.ComponentArtifactName(source, name) (contract K1), their
//     status written as a Flux source controller would; then its
//     ApplicationDefinitions, policies and tenant roles are applied and the
//     ones a new revision no longer ships removed (package adinstaller).
//  5. Status (summarize.go, package status): the served artifact, the
//     catalog metadata, and Ready/Reconciling/Stalled with one of the
//     reasons of v1alpha1.PackageSource. A failed reconcile is retried after 10 s,
//     doubling up to spec.interval, and the message says when.
//
// The steps reach the world through small interfaces: Opener (the origin
// of a spec; real: Open), ArtifactStore (real: package store) and
// ChartServer (real: package artifactserver), so that fetching and
// verifying (TestFetch) and publishing (TestPublish, over
// controller-runtime's fake client) are table-tested with fakes while the
// end-to-end tests of package operator run the real ones.
//
// A deleted PackageSource (grants.go) takes its ClusterRoles with it once
// none of its ApplicationDefinitions is left (adinstaller.RemoveGrants).
//
// Any failure in 2 or 3 leaves the served revision, its ExternalArtifacts
// and its definitions as they were: Ready=False names the failure and the
// revision still served.
package packagesourcereconciler
