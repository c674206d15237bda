package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// SystemNamespace is where the platform's operator publishes chart
// artifacts (ExternalArtifacts) for the components and applications of
// installed catalogs.
const SystemNamespace = "cozy-system"

// ComponentArtifactName is the name of the ExternalArtifact that publishes
// the chart of one component or application (by its name) of a
// PackageSource, in SystemNamespace. The hash
// suffix keeps names distinct where plain joining would collide
// ("acme.web"+"x" and "acme"+"web.x"; "acme.web" and "acme-web"). Contract K1:
// an ApplicationDefinition's release.source and release.component resolve to
// chartRef {kind: ExternalArtifact, name: ComponentArtifactName(...),
// namespace: SystemNamespace}.
func ComponentArtifactName(source, component string) string {
	sum := sha256.Sum256([]byte(source + "\x00" + component))
	name := source + "-" + component
	// Object names are at most 253 characters; keep room for the suffix.
	if len(name) > 200 {
		name = name[:200]
	}
	return name + "-" + hex.EncodeToString(sum[:4])
}

// Namespaces no catalog component may install into, privileged or not
// (docs/operator/catalogs.md, "Catalog delivery", "What a third-party catalog gets";
// contracts/artifact/README.md, components[].namespace). Catalog.Validate
// refuses them in catalog.yaml (contracts/artifact/validate.go) and the
// operator refuses them again, with reason NamespaceNotAllowed, for a
// catalog that was not built with that rule.
const (
	// ReleaseStorageNamespacePrefix begins the name of every Package's
	// release storage namespace, where Helm keeps its release records
	// (one per Package, named from it; the operator's names.StorageNamespace).
	// No component may take one, so a Package's storage namespace is its
	// own before it exists.
	ReleaseStorageNamespacePrefix = "cozy-releases-"
	// TenantNamespacePrefix begins the name of every tenant namespace
	// (tenant-root, tenant-<name>, tenant-<name>-<child>).
	TenantNamespacePrefix = "tenant-"
	// RootTenantNamespace is the root tenant's namespace.
	RootTenantNamespace = "tenant-root"
)

// reservedNamespaces are the exact reserved names, with the rule each
// breaks; reservedNamespacePrefixes the reserved prefixes.
var (
	reservedNamespaces = []struct{ name, rule string }{
		{"default", "the cluster's default namespace"},
		{SystemNamespace, "the platform's namespace"},
		{"flux-system", "Flux's namespace"},
		{RootTenantNamespace, "the root tenant's namespace"},
	}
	reservedNamespacePrefixes = []struct{ prefix, rule string }{
		{"kube-", "Kubernetes' namespaces"},
		{ReleaseStorageNamespacePrefix, "Packages' release storage namespaces"},
		{TenantNamespacePrefix, "tenant namespaces"},
	}
)

// ReservedNamespace returns why no catalog component may install into
// namespace name, e.g. `namespace names beginning with "tenant-" are
// reserved for tenant namespaces`, or "" when name is not reserved. The
// reserved names are default, cozy-system, flux-system and tenant-root,
// and every name beginning with kube-, cozy-releases- or tenant-. Pure.
func ReservedNamespace(name string) string {
	for _, r := range reservedNamespaces {
		if name == r.name {
			return fmt.Sprintf("namespace %s is reserved (%s)", name, r.rule)
		}
	}
	for _, r := range reservedNamespacePrefixes {
		if strings.HasPrefix(name, r.prefix) {
			return fmt.Sprintf("namespace names beginning with %q are reserved for %s", r.prefix, r.rule)
		}
	}
	return ""
}
