// Package rbac builds the least-privilege identity one component of a
// Package installs through, where the publisher charts of the system we
// follow install as cluster-admin (docs/operator/catalogs.md, "Catalog delivery", "RBAC";
// a component's rules are declared in catalog.yaml,
// contracts/artifact/README.md).
//
// Each enabled component gets, in its namespace, a ServiceAccount that its
// HelmRelease names in spec.serviceAccountName (helm-controller impersonates
// it for every Helm action), and a Role and RoleBinding granting exactly the
// component's declared rules, all three named names.Installer,
// "<release>-installer"; and, in the Package's release storage namespace
// (names.StorageNamespace, the HelmRelease's spec.storageNamespace), a Role
// and RoleBinding granting HelmStorageRule, so that no component reads
// every Secret of the namespace it installs into. A privileged component
// of a Package with allowPrivileged also gets a ClusterRole and
// ClusterRoleBinding (names.ClusterRBAC) with exactly its clusterRules.
// Nothing else: a chart that renders anything its component did not
// declare fails to install with Kubernetes' "forbidden" error, which the
// Package's status shows.
//
// One identity per component rather than per Package, so that a privileged
// component's cluster rights never reach a sibling in the same namespace.
package rbac
