// Package packagereconciler is the Package reconciler of cozystack-operator
// (its rules: docs/operator/catalogs.md, "Catalog delivery"; the catalog it installs:
// contracts/artifact/README.md). For each Package it installs one variant
// of its PackageSource's catalog: one HelmRelease per enabled component, in the
// component's namespace, whose chartRef is the ExternalArtifact the
// PackageSource reconciler publishes for that component, ordered by
// dependsOn across components and Packages, with values layered chart
// defaults < catalog < cluster values (K2) < Package (see build), through
// a least-privilege ServiceAccount of its own (package rbac).
//
// Before it writes anything it checks, in this order, and reports the
// first failure as Ready=False with the reason in parentheses: the source
// exists (SourceMissing; what is installed stays) and serves a revision
// (SourceNotReady); the platform meets the catalog's requirements
// (RequirementsNotMet); the variant (VariantMissing) and the named
// components (ComponentMissing) exist; no enabled component depends on a
// disabled one (DependencyNotReady); privileged components are allowed
// (PrivilegeNotAllowed); dependsOn has no cycle across components and
// Packages (DependencyCycle); every catalog the variant depends on is
// installed by some Package (DependencyNotReady); every namespace of its
// components, privileged or not, and its release storage namespace is
// one it may claim (NamespaceNotAllowed, see below); and no object it
// would write exists without being its own (Conflict). Only then does it
// claim the namespaces, before any other write. So a refused Package has
// nothing half created. Those are the stages of install (install.go), in
// order: planInstall (plan.go, privileges.go), desire (objects.go,
// namespaces.go), checkOwners (guard, awaitArtifacts), write (the
// claims, the CRD policy, apply and prune) and health (summarize), each
// stopping the install with its own result.
//
// It removes the HelmReleases of components no longer enabled, and, through
// its finalizer, all of a deleted Package's objects: HelmReleases first
// (helm-controller uninstalls them through their ServiceAccount), then the
// identities.
//
// # Ownership
//
// An object is the Package's if, and only if, its controller reference
// names the Package's UID (controlledBy). Every object the reconciler
// writes carries that reference: the HelmReleases, their ServiceAccounts,
// Roles and RoleBindings, the catalog values ConfigMaps, and the
// cluster-scoped ClusterRoles and ClusterRoleBindings of privileged
// components, and the CRD admission policy and binding of a Package with
// a privileged component (crdpolicy.go; a cluster-scoped Package may own
// both). The labels
// (app.kubernetes.io/managed-by, cozystack.io/package, .../component) and
// the cozystack.io/package annotation are only hints to select objects from
// the cache and to describe them: anyone who can write an object can set
// them, a tenant included (an application's labels reach its HelmRelease).
// So an object that carries them without the controller reference is
// never pruned, suspended, updated or adopted; if it is in the way of an
// object the Package would write, the Package reports Conflict naming the
// object and what owns it, or that nothing does, and, for an application's
// HelmRelease, the application and that its tenant must act. Applications
// cannot take a component's HelmRelease name (names.ReservedRelease), so
// only one created before that rule can be in the way.
//
// Objects are looked for only in the namespaces of the Package's
// components and in those status.namespaces records (where it wrote
// before, until emptied), never cluster-wide; cluster-scoped objects are
// listed by their labels, and kept only with the controller reference.
//
// # Namespaces
//
// A namespace belongs to exactly one Package from the moment it is
// claimed (namespaces.go, namespaceOwner). The reconciler claims it by
// creating it, annotated with the Package's name, UID and catalog
// (names.AnnotationPackage, AnnotationPackageUID, AnnotationCatalog);
// Create is atomic, so of two claimants the second gets AlreadyExists,
// reads it again and is refused. Reserved names
// (v1alpha1.ReservedNamespace, also refused in catalog.yaml) are never
// claimed, so a Package's storage namespace (cozy-releases-*) is its own
// before it exists. A claim of a Package that exists is refused to
// others unless both catalogs declare the namespace and both Packages
// name each other in spec.sharedNamespaces; the sharers are recorded
// (names.AnnotationSharedWith), and so are the releases installing there
// (names.AnnotationSharedReleases), which the admission policy
// shared-namespace-identities.cozystack.io reads to keep each Package's
// ServiceAccounts its own. A claim outlives its Package (namespaces carry
// no owner reference and are never deleted by the reconciler); only a
// Package of the same catalog takes it over. A name-only claim (made
// before UIDs were recorded) is the Package of that name's and is given
// its UID on the next write.
//
// The garbage collector deletes a Package's objects with it when its
// finalizer is bypassed or it is deleted in the foreground. The identities
// carry IdentityFinalizer, so that, however they are deleted, they stay
// until the HelmRelease they serve is uninstalled; the reconciler removes
// it once no HelmRelease of the component is left (for a Package that is
// gone, by the owner references of what it left, see sweep).
package packagereconciler
