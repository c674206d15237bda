package sdkcompat

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Version is a release of the SDK: MAJOR.MINOR.PATCH, no prerelease.
type Version struct {
	Major, Minor, Patch int
}

var versionPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// ParseVersion reads "1.2.3" (a leading "v" is accepted).
func ParseVersion(s string) (Version, error) {
	m := versionPattern.FindStringSubmatch(strings.TrimPrefix(strings.TrimSpace(s), "v"))
	if m == nil {
		return Version{}, fmt.Errorf("%q is no version MAJOR.MINOR.PATCH", s)
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	return v, nil
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Compare is -1, 0 or +1 as v is older than, equal to or newer than w.
func (v Version) Compare(w Version) int {
	for _, d := range []int{v.Major - w.Major, v.Minor - w.Minor, v.Patch - w.Patch} {
		if d != 0 {
			if d < 0 {
				return -1
			}
			return 1
		}
	}
	return 0
}

// MinorBumpOf reports whether v is at least the next minor release of w
// (the bump an addition needs): a higher major, or the same major and a
// higher minor.
func (v Version) MinorBumpOf(w Version) bool {
	return v.Major > w.Major || (v.Major == w.Major && v.Minor > w.Minor)
}

// BreakingBumpOf reports whether v may break w's API: from 1.0.0 on a
// higher major; before it (0.x) a higher major or minor, as in semver's
// 0.x convention. Either way the breaking changes also need a decision
// file (DecisionFile).
func (v Version) BreakingBumpOf(w Version) bool {
	if w.Major == 0 {
		return v.MinorBumpOf(w)
	}
	return v.Major > w.Major
}

// NextBreaking is the smallest version that may break v's API.
func (v Version) NextBreaking() Version {
	if v.Major == 0 {
		return Version{0, v.Minor + 1, 0}
	}
	return Version{v.Major + 1, 0, 0}
}

// NextMinor is the smallest version that may add to v's API.
func (v Version) NextMinor() Version { return Version{v.Major, v.Minor + 1, 0} }

// ReadVersion reads sdkDir/VERSION: one version, nothing else.
func ReadVersion(sdkDir string) (Version, error) {
	data, err := os.ReadFile(filepath.Join(sdkDir, VersionFile))
	if err != nil {
		return Version{}, err
	}
	v, err := ParseVersion(string(data))
	if err != nil {
		return Version{}, fmt.Errorf("%s: %w", filepath.Join(sdkDir, VersionFile), err)
	}
	return v, nil
}

// Baselines lists the versions that have a baseline directory
// (sdkDir/compat/v<version>), oldest first; a missing compat directory is
// no baseline.
func Baselines(sdkDir string) ([]Version, error) {
	entries, err := os.ReadDir(filepath.Join(sdkDir, CompatDir))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Version
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "v") {
			continue
		}
		v, err := ParseVersion(e.Name())
		if err != nil {
			continue // decisions/ and anything else
		}
		out = append(out, v)
	}
	slices.SortFunc(out, Version.Compare)
	return out, nil
}

// BaselineDir is the directory of v's baseline in sdkDir.
func BaselineDir(sdkDir string, v Version) string {
	return filepath.Join(sdkDir, CompatDir, "v"+v.String())
}

// DecisionFile is the file that accepts the breaking changes of release v.
func DecisionFile(sdkDir string, v Version) string {
	return filepath.Join(sdkDir, CompatDir, "decisions", "v"+v.String()+".md")
}
