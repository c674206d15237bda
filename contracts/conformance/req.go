package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/schemas"
)

// checkRequirements checks the catalog's minPlatformVersion against the
// platform version and the contract window, and its requiredProperties
// against the K3 properties the platform's contract version knows.
func checkRequirements(cat *artifact.Catalog, pos positions, table schemas.Table, platform schemas.ContractVersion, platformVersion string, known []schemas.Property) []Finding {
	var out []Finding
	min := cat.MinPlatformVersion
	at := func(segs ...string) int { return pos.line(segs...) }
	mv, merr := semver.StrictNewVersion(min)
	pv, perr := semver.StrictNewVersion(platformVersion)
	if merr == nil && perr == nil && mv.GreaterThan(pv) {
		out = append(out, Finding{RuleID: "REQ-min-platform-version", Severity: Error, File: artifact.CatalogFile, Line: at("minPlatformVersion"), Path: "minPlatformVersion",
			Message: fmt.Sprintf("the catalog needs platform %s or newer; platform %s refuses it (PackageSource Ready=False, reason RequirementsNotMet) and installs nothing", min, platformVersion),
			Fix:     fmt.Sprintf("check against platform %s or newer, or lower minPlatformVersion to %s if the catalog works with it (run this suite to know)", min, platformVersion)})
	} else if merr == nil && perr == nil {
		cv, err := table.ForPlatform(min)
		switch {
		case err != nil:
			out = append(out, Finding{RuleID: "REQ-contract-window", Severity: Error, File: artifact.CatalogFile, Line: at("minPlatformVersion"), Path: "minPlatformVersion",
				Message: fmt.Sprintf("minPlatformVersion %s belongs to no contract version this suite knows (%s): the catalog was written against contracts older than any platform supports", min, knownLines(table)),
				Fix:     fmt.Sprintf("check the catalog against platform %s and raise minPlatformVersion to it", platformVersion)})
		case !table.Accepts(platform.Name, cv.Name):
			out = append(out, Finding{RuleID: "REQ-contract-window", Severity: Error, File: artifact.CatalogFile, Line: at("minPlatformVersion"), Path: "minPlatformVersion",
				Message: fmt.Sprintf("minPlatformVersion %s is contract %s, outside the window of platform %s (contract %s accepts %s)", min, cv.Name, platformVersion, platform.Name, windowNames(table, platform.Name)),
				Fix:     fmt.Sprintf("check the catalog against platform %s and raise minPlatformVersion to a version of the window", platformVersion)})
		}
	}
	names := make([]string, len(known))
	for i, p := range known {
		names[i] = p.Name
	}
	for i, p := range cat.RequiredProperties {
		if !slices.Contains(names, p) {
			out = append(out, Finding{RuleID: "K3-unknown-property", Severity: Error, File: artifact.CatalogFile, Line: at("requiredProperties", fmt.Sprint(i)), Path: fmt.Sprintf("requiredProperties[%d]", i),
				Message: fmt.Sprintf("%s is not a K3 property of contract %s, so no platform %s advertises it and every install is refused%s", p, platform.Name, platformVersion, nearest(p, toKeys(names))),
				Fix:     fmt.Sprintf("require one of %s (k3-properties.md), or drop the requirement", strings.Join(names, ", "))})
		}
	}
	return out
}

func toKeys(names []string) map[string][]string {
	m := map[string][]string{}
	for _, n := range names {
		m[n] = nil
	}
	return m
}

func knownLines(t schemas.Table) string {
	var l []string
	for _, c := range t {
		l = append(l, c.Platform+".x = "+c.Name)
	}
	return strings.Join(l, ", ")
}

// windowNames lists the versions a platform of contract name accepts.
func windowNames(t schemas.Table, name string) string {
	var l []string
	for _, c := range t.Window(name) {
		if t.Accepts(name, c.Name) {
			l = append(l, c.Name+" ("+c.Platform+".x)")
		}
	}
	return strings.Join(l, " and ")
}
