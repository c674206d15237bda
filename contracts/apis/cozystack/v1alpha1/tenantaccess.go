package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Tenant access (contract K5, k5-cozy-lib.md, "Tenant roles"): the names a
// cluster operator maps an identity provider's groups onto, the
// ClusterRoles catalogs aggregate into, and the identities application
// releases install as. The names of the groups and roles are those of the
// system we follow, so an existing identity provider setup keeps working.

// Tenant access levels, in increasing order of rights. A user in group
// "<tenant namespace>-<level>" holds that level in the tenant and in every
// tenant below it.
const (
	TenantLevelView       = "view"
	TenantLevelUse        = "use"
	TenantLevelAdmin      = "admin"
	TenantLevelSuperAdmin = "super-admin"
)

// TenantLevels are the access levels in increasing order of rights.
var TenantLevels = []string{TenantLevelView, TenantLevelUse, TenantLevelAdmin, TenantLevelSuperAdmin}

// TenantRoleName is the platform's ClusterRole of a level, bound in every
// tenant namespace: "cozy:tenant:<level>". Its rules are aggregated from
// every ClusterRole labelled TenantRoleAggregationLabel(level), and it is
// itself labelled into the levels above.
func TenantRoleName(level string) string { return "cozy:tenant:" + level }

// TenantRoleAggregationLabel is the label (value "true") that folds a
// ClusterRole into TenantRoleName(level):
// "rbac.cozystack.io/aggregate-to-tenant-<level>".
func TenantRoleAggregationLabel(level string) string {
	return "rbac.cozystack.io/aggregate-to-tenant-" + level
}

// TenantGroup is the group whose members hold level in tenant namespace
// ns: "<ns>-<level>", e.g. "tenant-acme-admin".
func TenantGroup(ns, level string) string { return ns + "-" + level }

const (
	// InstallerServiceAccount is the ServiceAccount of every tenant
	// namespace that the releases of an application whose definition
	// names no catalog (a chartRef) install as: it holds only Helm's
	// release storage there, so such a chart installs nothing else.
	InstallerServiceAccount = "cozy-installer"
	// InstallerRoleLabel (value "true") marks the ClusterRole of one
	// catalog's application charts, which cozystack-operator writes from
	// the catalog's applications[].rules with Helm's release storage, and
	// annotates with AnnotationPackageSource; every tenant namespace binds
	// it to CatalogInstallerServiceAccount of that PackageSource.
	InstallerRoleLabel = "cozystack.io/installer-role"
	// AnnotationPackageSource holds the exact name of the PackageSource an
	// object was written for.
	AnnotationPackageSource = "cozystack.io/package-source"
	// TenantInstallerServiceAccount is the ServiceAccount of every tenant
	// namespace that the releases of its child Tenants install as: it may
	// create, change and delete only the namespaces of child tenants of
	// its own namespace and their ResourceQuotas (a ClusterRole, narrowed
	// by a ValidatingAdmissionPolicy; platform/tenantaccess).
	TenantInstallerServiceAccount = "cozy-tenant-installer"
)

// LabelParent is the tenant chart's label naming a tenant namespace's
// parent tenant namespace (absent on tenant-root). Only the parent's
// Tenant chart identity may set it (TenantInstallerServiceAccount), so
// the chain of parents is the tenant tree that tenant roles follow.
const LabelParent = "namespace.cozystack.io/parent"

// PlatformSource is the PackageSource of the platform's own catalog
// (platform/catalog.yaml). The Tenant application it publishes
// (release.source "platform", release.component "tenant") is the one
// application whose releases install as TenantInstallerServiceAccount;
// every other application installs as the installer of its catalog,
// CatalogInstallerServiceAccount(release.source).
const PlatformSource = "platform"

// CatalogInstallerServiceAccount is the ServiceAccount of every tenant
// namespace that the application releases of PackageSource source install
// as: "cozy-installer-<source>", holding exactly that catalog's declared
// applications[].rules there and Helm's release storage in
// ApplicationReleaseStorageNamespace, so one catalog's charts
// never use another's rights. A source too long for a name is cut, with a
// hash of the whole name appended.
func CatalogInstallerServiceAccount(source string) string {
	const prefix, limit = InstallerServiceAccount + "-", 253
	name := prefix + source
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(source))
	return name[:limit-9] + "-" + hex.EncodeToString(sum[:4])
}

// ApplicationReleaseStorageNamespace is the namespace where Helm keeps the
// release records of the applications of PackageSource source in tenant
// namespace tenantNamespace (their HelmReleases' spec.storageNamespace):
// "cozy-releases-app-<10 hex digits of the SHA-256 of tenantNamespace NUL
// source>", a DNS label. Helm lists Secrets to find a release, and
// Kubernetes cannot narrow a list by name, so the records live apart: the
// catalog's installer reads Secrets only there, never every Secret of the
// tenant namespace (docs/operator/tenants.md, "Tenants: who may do what"). It begins with
// ReleaseStorageNamespacePrefix, which no catalog component may take
// (ReservedNamespace), and has no "--<hash>" suffix, so it is never a
// Package's storage namespace. cozystack-controller creates it
// (platform/internal/controller/tenantrbac); cozystack-api names it in
// the HelmRelease of every application it creates
// (platform/internal/registry/application).
func ApplicationReleaseStorageNamespace(tenantNamespace, source string) string {
	sum := sha256.Sum256([]byte(tenantNamespace + "\x00" + source))
	return ReleaseStorageNamespacePrefix + "app-" + hex.EncodeToString(sum[:])[:10]
}

// IsInstallerServiceAccount says whether name is one of the installer
// identities application releases install as (InstallerServiceAccount,
// CatalogInstallerServiceAccount, TenantInstallerServiceAccount): no
// workload may run as one (policy installer-identities.cozystack.io).
func IsInstallerServiceAccount(name string) bool {
	return name == TenantInstallerServiceAccount || name == InstallerServiceAccount ||
		strings.HasPrefix(name, InstallerServiceAccount+"-")
}
