package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// MaxReleaseName is Helm's limit on release names, which helm-controller
// takes from the HelmRelease name (helm.sh/helm/v3 action.releaseNameMaxLen).
const MaxReleaseName = 53

// hashLen is the number of hex digits of the hash suffix: 40 bits, so an
// accidental collision needs about a million components in one namespace,
// and a crafted one a 2^40 search; the owner guard (Conflict) still catches
// that.
const hashLen = 10

// Labels and annotations on the objects the operator creates. None of them
// is proof of ownership (anyone who can write an object can set them): the
// operator decides ownership by the object's controller reference to the
// owning Package's (or PackageSource's) UID, and uses these only to select
// candidates from its cache and to describe objects to people.
const (
	// LabelPackage is LabelValue(package name), for selecting a Package's
	// objects.
	LabelPackage = "cozystack.io/package"
	// AnnotationPackage is the exact name of the Package that created the
	// object, for people; the controller reference is what counts.
	AnnotationPackage = "cozystack.io/package"
	// AnnotationPackageUID and AnnotationCatalog, with AnnotationPackage,
	// are a Namespace's claim: the UID of the Package that owns it and the
	// name of that Package's catalog (docs/operator/catalogs.md, "Catalog delivery",
	// "Ownership"). A Namespace is the one cluster-scoped object the
	// operator marks by annotation instead of an owner reference (the
	// garbage collector would delete it, and what others put there, with
	// the Package); only the operator and cluster administrators can write
	// Namespaces (no component's rules may name them, artifact.CheckComponentRules).
	AnnotationPackageUID = "cozystack.io/package-uid"
	AnnotationCatalog    = "cozystack.io/catalog"
	// AnnotationSharedWith lists, as JSON [{"package", "uid", "catalog"}],
	// the Packages other than the owner that share the Namespace, each by
	// mutual consent (PackageSpec.sharedNamespaces).
	AnnotationSharedWith = "cozystack.io/shared-with"
	// AnnotationSharedReleases is set on a shared Namespace only: the
	// HelmReleases installing there and the Package of each, as
	// space-separated "<release>=<package>" (sorted), which the admission
	// policy shared-namespace-identities.cozystack.io
	// (platform/tenantaccess/policy.yaml) reads to tell whose a
	// ServiceAccount is by its name.
	AnnotationSharedReleases = "cozystack.io/shared-releases"
	// LabelComponent is the component name (a DNS label, so a valid label
	// value).
	LabelComponent = "cozystack.io/component"
	// LabelPackageSource is LabelValue(PackageSource name) on the
	// ExternalArtifacts a PackageSource publishes; AnnotationPackageSource
	// is its exact name.
	LabelPackageSource      = "cozystack.io/package-source"
	AnnotationPackageSource = v1alpha1.AnnotationPackageSource
)

// ReleaseMarker separates the readable part of a component's HelmRelease
// name from its hash (see ReservedRelease).
const ReleaseMarker = "--"

// HelmRelease returns the name of the HelmRelease installing component of
// Package pkg: "<readable>--<10 hex digits>", at most MaxReleaseName
// characters, a DNS-1123 label (so the Helm release name, and chart
// objects named after it, are valid), unique for each exact (pkg,
// component) pair, and reserved (ReservedRelease), so no application's
// HelmRelease can take it.
func HelmRelease(pkg, component string) string {
	return hashed(MaxReleaseName, ReleaseMarker, pkg, component)
}

// ReservedRelease reports whether name is reserved for the HelmReleases of
// Package components and the objects derived from them: whether it holds
// ReleaseMarker ("--") followed by exactly 10 lowercase hex digits
// ([0-9a-f]) that either end the name or are followed by "-". Every name
// HelmRelease, Installer and CatalogValues return is reserved.
//
// cozystack-api calls it with the HelmRelease name an application would
// get ("<release prefix><name>", after generateName is resolved) and
// refuses the application when it returns true, so that no application's
// release can take a name a Package component may need in the same
// namespace. It is pure, and depends only on name.
func ReservedRelease(name string) bool {
	for i := 0; i+len(ReleaseMarker)+hashLen <= len(name); i++ {
		end := i + len(ReleaseMarker) + hashLen
		if name[i:i+len(ReleaseMarker)] == ReleaseMarker && isHex(name[i+len(ReleaseMarker):end]) &&
			(end == len(name) || name[end] == '-') {
			return true
		}
	}
	return false
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// InstallerSuffix ends the names of a component's installing identity.
const InstallerSuffix = "-installer"

// Installer returns the name of the ServiceAccount, Role and RoleBinding a
// component's HelmRelease installs through, in the component's namespace:
// HelmRelease(pkg, component) + InstallerSuffix. Not the release name
// itself: charts name their own ServiceAccounts and Roles after the
// release, and Helm refuses to install over an object it does not own.
func Installer(pkg, component string) string {
	return HelmRelease(pkg, component) + InstallerSuffix
}

// StorageNamespace returns the namespace where the HelmReleases of Package
// pkg keep Helm's release records (their spec.storageNamespace):
// "cozy-releases-<pkg>--<10 hex digits>", a DNS label. Helm must list
// Secrets to find a release, and Kubernetes cannot narrow a list by name,
// so the records live apart from the components' namespaces: a
// component's installer reads Secrets only there, never every Secret of
// the namespace it installs into.
//
// It begins with v1alpha1.ReleaseStorageNamespacePrefix, which no
// component may install into (v1alpha1.ReservedNamespace), so it is the
// Package's before it exists.
func StorageNamespace(pkg string) string {
	return hashed(63, ReleaseMarker, strings.TrimSuffix(v1alpha1.ReleaseStorageNamespacePrefix, "-"), pkg)
}

// ClusterRBAC returns the name of the ClusterRole and ClusterRoleBinding
// that grant a privileged component its clusterRules. The "cozystack.io:"
// prefix keeps them apart from a cluster's own roles; the rest is
// HelmRelease(pkg, component), unique cluster-wide because it encodes the
// Package (cluster-scoped) and the component.
func ClusterRBAC(pkg, component string) string {
	return "cozystack.io:package:" + HelmRelease(pkg, component)
}

// CatalogValues returns the name of the ConfigMap holding a component's
// catalog values (the lowest layer above the chart defaults), in the
// component's namespace.
func CatalogValues(pkg, component string) string {
	return HelmRelease(pkg, component) + "-catalog-values"
}

// StoreTag returns the tag under which the operator's store keeps the
// revision a PackageSource serves. PackageSource names are DNS subdomains
// (at most 253 characters, no "/"), so the tag is injective.
func StoreTag(source string) string { return "packagesource/" + source }

// PendingTag returns the tag of a revision of source that was pulled and
// verified but is not (yet) served; it protects the revision from garbage
// collection while requirements are checked.
func PendingTag(source string) string { return "pending/" + source }

// LabelValue returns s if it is a valid label value (at most 63
// characters), else a truncated form with a hash suffix. Package and
// PackageSource names are DNS subdomains, so only the length can be wrong.
func LabelValue(s string) string {
	if len(s) <= 63 {
		return s
	}
	return hashed(63, "-", s)
}

// hashed joins parts with "-", maps every character outside [a-z0-9-] to
// "-", cuts the result to leave room for the suffix, and appends sep and
// the first hashLen hex digits of the SHA-256 of the exact parts joined by
// NUL (which no name contains, so the hash input is injective too).
func hashed(limit int, sep string, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	suffix := hex.EncodeToString(sum[:])[:hashLen]
	base := sanitize(strings.Join(parts, "-"))
	if max := limit - len(sep) - hashLen; len(base) > max {
		base = base[:max]
	}
	base = strings.Trim(base, "-")
	if base == "" {
		// Not for the inputs the operator has (Package names are DNS
		// subdomains, so they start with a letter or digit), but a name
		// must start with one, and the separator must stay.
		base = "x"
	}
	return base + sep + suffix
}

func sanitize(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			b[i] = '-'
		}
	}
	return string(b)
}
