// Package adinstaller installs what a catalog's artifact carries beside its
// charts: its ApplicationDefinitions and the ValidatingAdmissionPolicies
// (and bindings) shipped with them (contracts/artifact, "definitions
// layers"). The PackageSource reconciler calls Install for the revision it
// serves (through InstallForSource, which reads the source past the cache
// so that a source deleted meanwhile gets no new kind), so a catalog's
// kinds appear in the application API when its source is Ready, and only
// then: a catalog refused for its requirements
// installs no kind (contracts/artifact/README.md, "Definitions: the
// ApplicationDefinitions and their policies").
//
// A catalog's AD names its chart by the catalog's name and the
// application's name (spec.release.source and .component, contract K1),
// while the cluster operator names the PackageSource: Rebind points the ADs
// that name their own catalog at the PackageSource that serves it, whose
// ExternalArtifacts carry the charts.
//
// Ownership follows the ExternalArtifacts' rule: an object carries the
// label cozystack.io/package-source (names.LabelValue of the source) and
// the annotation with the source's exact name; an object of the same name
// that another source, or a person, created is never overwritten (a
// *ConflictError, and nothing of the revision is applied). The objects get
// no owner reference to the source: deleting a PackageSource leaves its
// kinds served, as it leaves installed Packages running, so tenants'
// applications never vanish from the API because a source was removed;
// its ClusterRoles go once the source and all its definitions are gone
// (RemoveGrants, grants.go). A
// policy is owned by the definitions whose kinds it matches (and a binding
// by its policy), so it never outlives the kinds it guards.
//
// Kinds belong to catalogs (Guard): a definition claiming a name another
// catalog's definition holds refuses its whole revision, so a kind moves
// to another catalog only when its holder stops shipping it, and an
// application installed from one catalog's chart is never switched to
// another's by cozystack-api (contract K1, "Who serves a kind").
//
// That makes this the one place where the operator decides ownership by an
// annotation rather than a controller reference with the owner's UID (the
// rule of the Package's objects and the ExternalArtifacts): an owner
// reference would let the garbage collector delete the kinds with their
// source, and an annotated UID would turn re-creating a source into a
// Conflict on its own kinds. It holds because every kind here is
// cluster-scoped: only cluster administrators, and privileged components
// a Package was allowed to install with such clusterRules, can create or
// label one; tenants, whose rights end at their namespaces, cannot.
//
// Beside Install: InUse finds the kinds a new revision would drop that
// still have applications (KindInUse; K1 "Removing a kind that has
// applications"), and Roles builds the catalog's tenant roles and its
// installer role, cozy:catalog:<source>:installer, which tenant namespaces
// bind to cozy-installer-<source> (K5, contracts/schemas/v1alpha1/
// k5-cozy-lib.md, "Tenant roles").
package adinstaller
