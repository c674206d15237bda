// Package names derives the names, labels and annotations of everything
// cozystack-operator creates, so that two different inputs never map to the
// same object (BRIEF.md section 5, item 6: the system we follow collapses
// "." to "-", so the Packages "acme.web" and "acme-web" collide).
//
// The rule: every derived name is a readable prefix (the inputs joined with
// "-", with any character a DNS label cannot hold replaced by "-", cut to
// fit) followed by "-" and a hash of the exact inputs. Because the hash is
// always there, the readable part may be ambiguous or truncated without
// two inputs ever sharing a name.
package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxReleaseName is Helm's limit on release names, which helm-controller
// takes from the HelmRelease name (helm.sh/helm/v3 action.releaseNameMaxLen).
const MaxReleaseName = 53

// hashLen is the number of hex digits of the hash suffix: 40 bits, so an
// accidental collision needs about a million components in one namespace,
// and a crafted one a 2^40 search; the owner guard (Conflict) still catches
// that.
const hashLen = 10

// Labels and annotations on the objects the operator creates.
const (
	// LabelManagedBy with value ManagedBy marks every object the operator
	// creates; the operator's caches watch only those.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "cozystack-operator"
	// LabelPackage is LabelValue(package name), for selecting a Package's
	// objects. It is not proof of ownership: AnnotationPackage is.
	LabelPackage = "cozystack.io/package"
	// AnnotationPackage is the exact name of the Package that owns the
	// object. The owner guard compares it before writing anything.
	AnnotationPackage = "cozystack.io/package"
	// LabelComponent is the component name (a DNS label, so a valid label
	// value).
	LabelComponent = "cozystack.io/component"
	// LabelPackageSource is LabelValue(PackageSource name) on the
	// ExternalArtifacts a PackageSource publishes; AnnotationPackageSource
	// is its exact name.
	LabelPackageSource      = "cozystack.io/package-source"
	AnnotationPackageSource = "cozystack.io/package-source"
)

// HelmRelease returns the name of the HelmRelease installing component of
// Package pkg: at most MaxReleaseName characters, a DNS-1123 label (so the
// Helm release name, and chart objects named after it, are valid), unique
// for each exact (pkg, component) pair.
func HelmRelease(pkg, component string) string {
	return hashed(MaxReleaseName, pkg, component)
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
	return hashed(63, s)
}

// hashed joins parts with "-", maps every character outside [a-z0-9-] to
// "-", cuts the result to leave room for the suffix, and appends "-" and
// the first hashLen hex digits of the SHA-256 of the exact parts joined by
// NUL (which no name contains, so the hash input is injective too).
func hashed(limit int, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	suffix := hex.EncodeToString(sum[:])[:hashLen]
	base := sanitize(strings.Join(parts, "-"))
	if max := limit - 1 - hashLen; len(base) > max {
		base = base[:max]
	}
	base = strings.Trim(base, "-")
	if base == "" {
		// A label may start with a digit; the hash alone is a valid name.
		return suffix
	}
	return base + "-" + suffix
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
