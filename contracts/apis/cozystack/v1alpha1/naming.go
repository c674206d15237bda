package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
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
