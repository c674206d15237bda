package schemas

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// ContractVersion is one version of the contracts K1–K6: a directory of
// FS, implemented by one platform release line.
type ContractVersion struct {
	// Name is the version and its directory, e.g. "v1alpha1".
	Name string
	// Platform is the platform release line implementing it,
	// "MAJOR.MINOR": every patch release of the line implements exactly
	// this version.
	Platform string
	// Released is true once a platform release of the line shipped: the
	// version's files are frozen from then on (pins.sum; a test refuses
	// any change), and a change is a new contract version.
	Released bool
}

// Table lists contract versions, oldest first; each platform line maps to
// one version and the versions' order is the platform lines' order.
type Table []ContractVersion

// Versions are the contract versions this module knows. One contract
// version per platform release line; add the next one (README.md, "Adding
// a contract version") by copying the newest directory, editing it, and
// appending a row here.
var Versions = Table{
	{Name: "v1alpha1", Platform: "0.1", Released: false},
}

// Latest returns the newest contract version.
func (t Table) Latest() ContractVersion { return t[len(t)-1] }

// Index returns the position of the contract version named name, or -1.
func (t Table) Index(name string) int {
	for i, v := range t {
		if v.Name == name {
			return i
		}
	}
	return -1
}

// ForPlatform returns the contract version platform version v (SemVer,
// e.g. "0.1.0" or "0.1.2-rc.1") implements: the row of its MAJOR.MINOR
// line. A version outside every known line is an error that says which
// lines are known.
func (t Table) ForPlatform(v string) (ContractVersion, error) {
	sv, err := semver.StrictNewVersion(v)
	if err != nil {
		return ContractVersion{}, fmt.Errorf("platform version %q is not SemVer 2.0 (MAJOR.MINOR.PATCH, no leading v): %w", v, err)
	}
	line := fmt.Sprintf("%d.%d", sv.Major(), sv.Minor())
	var known []string
	for _, c := range t {
		if c.Platform == line {
			return c, nil
		}
		known = append(known, c.Platform+".x ("+c.Name+")")
	}
	return ContractVersion{}, fmt.Errorf("platform version %s: no contract version is known for the release line %s (this contracts module knows %s); update cozystack.io/contracts",
		v, line, strings.Join(known, ", "))
}

// Window returns the contract versions a catalog written against version
// name is checked against: N-1, N and N+1, those that exist, oldest first.
// A platform implementing N accepts catalogs whose minPlatformVersion maps
// to N-1 or N; a catalog is tested against N+1 so that the next platform
// release is known to accept it before it ships. Nil when name is unknown.
func (t Table) Window(name string) []ContractVersion {
	i := t.Index(name)
	if i < 0 {
		return nil
	}
	lo, hi := max(i-1, 0), min(i+1, len(t)-1)
	return append([]ContractVersion(nil), t[lo:hi+1]...)
}

// Accepts reports whether a platform implementing contract version
// platform accepts a catalog whose minPlatformVersion maps to catalog:
// the catalog's version is N-1 or N of the platform's N. Unknown names are
// not accepted.
func (t Table) Accepts(platform, catalog string) bool {
	p, c := t.Index(platform), t.Index(catalog)
	return p >= 0 && c >= 0 && c <= p && c >= p-1
}
