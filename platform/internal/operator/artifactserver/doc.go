// Package artifactserver serves the chart archives of the revisions
// PackageSources serve, over plain HTTP, to helm-controller, which
// downloads them from the URLs in ExternalArtifact status and checks their
// SHA-256 digest: the operator is the charts' source, so no Flux
// source-controller is needed (docs/operator/catalogs.md, "Catalog delivery").
//
// URLs are content-addressed: /<packagesource>/<chart digest>/<chart
// name>-<chart version>.tgz. A new revision gets new URLs, so the bytes
// under a URL never change, and a URL is served only while the named
// PackageSource serves a revision holding that chart (Publish, Withdraw).
package artifactserver
