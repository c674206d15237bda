package artifact

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// CozyLib is the name of the platform's library chart (contract K5,
// contracts/schemas/v1alpha1/k5-cozy-lib.md).
const CozyLib = "cozy-lib"

// PinProblem is one thing wrong with a chart's dependency on cozy-lib:
// the field of the dependency (repository or version), what is wrong and
// the fix.
type PinProblem struct {
	Field, Message, Fix string
}

// CheckCozyLibPin checks a chart's dependency on cozy-lib as contract K5
// writes it (k5-cozy-lib.md): the repository is oci:// (the chart the
// platform publishes, never a file:// path into the platform or another
// repository) and the version is one exact SemVer version. example is the
// version the fix suggests. It is the rule K5-pin of cozypkg conformance
// and the check cozypkg build makes, so both refuse the same charts.
func CheckCozyLibPin(repository, version, example string) []PinProblem {
	var out []PinProblem
	if !strings.HasPrefix(repository, "oci://") {
		out = append(out, PinProblem{Field: "repository",
			Message: fmt.Sprintf("cozy-lib comes from %q: a catalog takes it only as the OCI chart the platform publishes, never from a path into the platform or another repository", repository),
			Fix:     "set repository to oci://<registry>/cozystack/charts"})
	}
	if _, err := semver.StrictNewVersion(version); err != nil {
		out = append(out, PinProblem{Field: "version",
			Message: fmt.Sprintf("cozy-lib version %q is not one exact version: a range lets the build pick a library the catalog was never tested with", version),
			Fix:     fmt.Sprintf("pin one version, e.g. %s", example)})
	}
	return out
}
