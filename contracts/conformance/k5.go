package conformance

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/schemas"
)

// CozyLib is the name of the platform's library chart (K5).
const CozyLib = artifact.CozyLib

// checkK5 checks the cozy-lib pin of every chart that includes a cozy-lib
// helper, and that only public helpers are included.
func checkK5(charts chartSet, helpers []schemas.Helper, platformVersion, contract string) []Finding {
	var out []Finding
	public := map[string]bool{}
	for _, h := range helpers {
		public[h.Name] = true
	}
	for _, p := range charts.paths() {
		c := charts[p]
		uses := false
		for _, t := range c.templates {
			_, includes := scanTemplate(t)
			for _, inc := range includes {
				if !strings.HasPrefix(inc.name, CozyLib+".") {
					continue
				}
				uses = true
				switch {
				case strings.HasPrefix(inc.name, CozyLib+".internal."):
					out = append(out, Finding{RuleID: "K5-private-helper", Severity: Error, File: t.Name, Line: inc.line, Path: inc.name,
						Message: fmt.Sprintf("the chart includes %s, a private helper of cozy-lib: it may change in any release", inc.name),
						Fix:     "use the public helper that does the job (k5-cozy-lib.md), or ask for one"})
				case !public[inc.name]:
					out = append(out, Finding{RuleID: "K5-unknown-helper", Severity: Error, File: t.Name, Line: inc.line, Path: inc.name,
						Message: fmt.Sprintf("the chart includes %s, which is not a public helper of cozy-lib in contract %s", inc.name, contract) + nearestHelper(inc.name, public),
						Fix:     "include one of the helpers k5-cozy-lib.json lists"})
				}
			}
		}
		out = append(out, checkPin(c, uses, platformVersion)...)
	}
	return out
}

func nearestHelper(name string, public map[string]bool) string {
	keys := map[string][]string{}
	for h := range public {
		keys[h] = nil
	}
	return nearest(name, keys)
}

// checkPin checks the chart's cozy-lib dependency: required when the chart
// includes a helper; when present, from an oci:// repository, at one
// exact version no newer than the platform, and vendored.
func checkPin(c *loadedChart, uses bool, platformVersion string) []Finding {
	var out []Finding
	file := c.chartYAML()
	idx := -1
	for i, d := range c.chart.Metadata.Dependencies {
		if d.Name == CozyLib {
			idx = i
			break
		}
	}
	if idx < 0 {
		if uses {
			out = append(out, Finding{RuleID: "K5-pin", Severity: Error, File: file, Line: c.chartPos.line("dependencies"), Path: "dependencies",
				Message: "the chart includes cozy-lib helpers but does not depend on cozy-lib",
				Fix:     fmt.Sprintf("add {name: cozy-lib, version: %s, repository: oci://<registry>/cozystack/charts} to dependencies and vendor it (cozypkg vendor-lib)", platformVersion)})
		}
		return out
	}
	d := c.chart.Metadata.Dependencies[idx]
	at := func(field string) (int, string) {
		return c.chartPos.line("dependencies", fmt.Sprint(idx), field), fmt.Sprintf("dependencies[%d].%s", idx, field)
	}
	// The rule cozypkg build applies too (artifact.CheckCozyLibPin).
	for _, p := range artifact.CheckCozyLibPin(d.Repository, d.Version, platformVersion) {
		line, path := at(p.Field)
		out = append(out, Finding{RuleID: "K5-pin", Severity: Error, File: file, Line: line, Path: path, Message: p.Message, Fix: p.Fix})
	}
	v, err := semver.StrictNewVersion(d.Version) // not exact: reported above
	if pv, perr := semver.StrictNewVersion(platformVersion); err == nil && perr == nil && v.GreaterThan(pv) {
		line, path := at("version")
		out = append(out, Finding{RuleID: "K5-pin-version", Severity: Error, File: file, Line: line, Path: path,
			Message: fmt.Sprintf("cozy-lib %s is newer than platform %s: it is published by a newer platform and may read cluster values %s does not write", d.Version, platformVersion, platformVersion),
			Fix:     fmt.Sprintf("pin cozy-lib %s or older, or raise minPlatformVersion and check against a newer platform", platformVersion)})
	}
	found := false
	for _, dep := range c.chart.Dependencies() {
		if dep.Name() == CozyLib && dep.Metadata != nil && dep.Metadata.Version == d.Version {
			found = true
		}
	}
	if !found && err == nil {
		line, path := at("version")
		out = append(out, Finding{RuleID: "K5-vendored", Severity: Error, File: file, Line: line, Path: path,
			Message: fmt.Sprintf("cozy-lib %s is not vendored in %s/charts/: the build and helm-controller cannot fetch it", d.Version, c.path),
			Fix:     fmt.Sprintf("run cozypkg vendor-lib cozy-lib-%s.tgz %s (make vendor-cozy-lib)", d.Version, c.path)})
	}
	return out
}
