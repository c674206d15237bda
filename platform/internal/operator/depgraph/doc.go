// Package depgraph finds dependency cycles among the HelmReleases the
// operator would create: components depend on components of their variant
// (components[].dependsOn) and on every component of the Packages that
// install the catalogs their variant depends on (variants[].dependsOn;
// both in contracts/artifact/README.md, "catalog.yaml"). A cycle would
// leave every HelmRelease on it waiting forever, so the Package reconciler
// refuses it before creating anything (reason DependencyCycle, the cycle
// printed by Format as "<package>/<component> → …").
package depgraph
