// Package tenantrbac binds the tenant roles and installer identities in
// every tenant namespace (contract K5, k5-cozy-lib.md, "Tenant roles";
// the cluster-wide roles are in platform/tenantaccess):
//
//   - RoleBindings cozy:tenant:<level> to ClusterRoles cozy:tenant:<level>
//     for the groups "<namespace>-<level'>" of every level' at or above
//     level, of the namespace and of every ancestor tenant namespace (the
//     chain of recorded parents up to tenant-root, Ancestors), so a parent
//     tenant's users hold the same rights in every descendant;
//   - per installed catalog (a ClusterRole labelled
//     cozystack.io/installer-role, written by cozystack-operator), the
//     ServiceAccount cozy-installer-<PackageSource> bound to it, which the
//     releases of that catalog's applications install as, and the
//     catalog's release storage namespace of this namespace
//     (v1alpha1.ApplicationReleaseStorageNamespace, owned by the tenant
//     Namespace), where that installer alone holds Helm's storage; Helm's
//     storage in the namespace itself only while a release of the catalog
//     keeps its records there (created before storage namespaces); those of a
//     catalog that is gone (its role deleted by cozystack-operator once
//     the catalog's PackageSource and definitions are gone) are deleted,
//     and only those this package applied (metadata.managedFields), its
//     storage namespace too unless it still holds a Helm release record
//     (a release handed over to another catalog keeps its records there);
//   - the ServiceAccount cozy-installer, which releases of applications of
//     no catalog install as, bound to Helm's release storage only;
//   - the ServiceAccount cozy-tenant-installer, which the releases of the
//     namespace's child Tenants install as: bound to Helm's storage rights
//     in the namespace, and by a ClusterRoleBinding (owned by the
//     Namespace, so collected with it) to cozy:tenant-installer, which the
//     policy tenant-installer-scope.cozystack.io narrows to the child
//     tenants' namespaces.
//
// Objects are written with server-side apply and labelled
// app.kubernetes.io/managed-by=cozystack-controller; a namespace's objects
// are reconciled again when it or an ancestor changes, and deleted when it
// stops being a tenant namespace.
//
// The lifecycle (contract K2, k2-cluster-values.md, "Tenant namespaces";
// lifecycle.go):
//   - a parent is recorded, never read from a label alone: the first time
//     a tenant namespace names parent P by its namespace.cozystack.io/parent
//     label, P must be a live tenant namespace holding the Tenant
//     HelmRelease that renders it (Helm's meta.helm.sh release annotations
//     on the namespace); then the namespace gets an ownerReference to the
//     Namespace P with P's UID (ParentOwner), which Ancestors follows only
//     while the live P has that UID. Garbage collection removes a namespace
//     whose recorded parent is gone. An unverified label gets a Warning
//     event (ReasonParentNotVerified) and no ancestor;
//   - every ServiceAccount and RoleBinding written in a namespace carries
//     FinalizerTenantReleases, removed once the namespace is terminating
//     and holds no HelmRelease: the installers outlive the releases that
//     install as them, and the parent's groups keep their rights to finish
//     a dying child. The ClusterRoleBinding, owned by the Namespace, goes
//     after it.
package tenantrbac
