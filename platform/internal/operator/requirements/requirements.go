package requirements

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// Platform is what this platform offers: its version (--platform-version)
// and the K3 properties it advertises (--properties), e.g.
// "network.stableVMAddress".
type Platform struct {
	Version    string
	Properties []string
}

// Validate checks that Version is SemVer 2.0; the error names the flag.
func (p Platform) Validate() error {
	if _, err := semver.StrictNewVersion(p.Version); err != nil {
		return fmt.Errorf("--platform-version %q: want SemVer 2.0 MAJOR.MINOR.PATCH without a leading v: %w", p.Version, err)
	}
	return nil
}

// UnmetError lists every requirement of a catalog this platform does not
// meet. Its message says what to change, on which side.
type UnmetError struct {
	// Catalog and Version identify the catalog.
	Catalog, Version string
	// MinPlatformVersion is set when the platform is older than it;
	// PlatformVersion is the platform's.
	MinPlatformVersion, PlatformVersion string
	// MissingProperties are required K3 properties the platform lacks,
	// sorted.
	MissingProperties []string
	// Provided are the properties the platform advertises, sorted.
	Provided []string
}

func (e *UnmetError) Error() string {
	var parts []string
	if e.MinPlatformVersion != "" {
		parts = append(parts, fmt.Sprintf("needs platform version %s or newer, this platform is %s: upgrade the platform or pin an older catalog version",
			e.MinPlatformVersion, e.PlatformVersion))
	}
	if len(e.MissingProperties) > 0 {
		provided := "none"
		if len(e.Provided) > 0 {
			provided = strings.Join(e.Provided, ", ")
		}
		parts = append(parts, fmt.Sprintf("needs the K3 properties %s, which this platform does not advertise (it advertises: %s); enable them and list them in cozystack-operator --properties",
			strings.Join(e.MissingProperties, ", "), provided))
	}
	return fmt.Sprintf("catalog %s %s %s", e.Catalog, e.Version, strings.Join(parts, "; "))
}

// Check returns nil when p meets the requirements of the catalog info
// describes, else an *UnmetError naming each unmet one. A minPlatformVersion
// that is not SemVer is unmet too (the artifact's validation rules it out).
// Pre-releases compare as SemVer says: 0.3.0-rc.1 is older than 0.3.0.
func Check(info v1alpha1.CatalogInfo, p Platform) error {
	e := &UnmetError{Catalog: info.Name, Version: info.Version, PlatformVersion: p.Version}
	min, err := semver.StrictNewVersion(info.MinPlatformVersion)
	have, herr := semver.StrictNewVersion(p.Version)
	if err != nil || herr != nil || have.LessThan(min) {
		e.MinPlatformVersion = info.MinPlatformVersion
	}
	e.Provided = slices.Sorted(slices.Values(p.Properties))
	for _, want := range info.RequiredProperties {
		if !slices.Contains(p.Properties, want) {
			e.MissingProperties = append(e.MissingProperties, want)
		}
	}
	slices.Sort(e.MissingProperties)
	if e.MinPlatformVersion == "" && len(e.MissingProperties) == 0 {
		return nil
	}
	return e
}
