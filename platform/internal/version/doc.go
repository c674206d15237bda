// Package version holds the platform's release version, the one catalogs
// compare their minPlatformVersion with (package
// cozystack.io/platform/internal/operator/requirements; the mapping of
// platform versions to contract versions is contracts/schemas/README.md).
// Release builds may override it with
// -ldflags "-X cozystack.io/platform/internal/version.override=1.2.3".
package version
