package conformance

import (
	"fmt"
	"slices"
	"strings"

	"cozystack.io/contracts/schemas"
)

// Options choose what to check against.
type Options struct {
	// PlatformVersion is the platform release (SemVer) to check against;
	// it selects the contract version (schemas.Table.ForPlatform).
	PlatformVersion string
	// Previous is the catalog's previous version; when set, the K4
	// cross-version rules compare its values schemas with these.
	Previous *Source
	// Contracts is the table of contract versions; nil means
	// schemas.Versions.
	Contracts schemas.Table
}

// Check runs every static rule on src. The error is for what makes
// checking impossible (an unknown platform version); everything wrong
// with the catalog is a finding.
func Check(src *Source, opts Options) (*Report, error) {
	table := opts.Contracts
	if table == nil {
		table = schemas.Versions
	}
	cv, err := table.ForPlatform(opts.PlatformVersion)
	if err != nil {
		return nil, err
	}
	contract := cv.Name
	digest, err := schemas.Digest(contract)
	if err != nil {
		return nil, err
	}
	r := &Report{Source: src.Name, PlatformVersion: opts.PlatformVersion, ContractVersion: contract, ContractDigest: digest}
	r.add(src.Problems...)
	catPos := newPositions(src.CatalogYAML, 0)
	if src.Catalog != nil {
		r.Catalog, r.Version = src.Catalog.Name, src.Catalog.Version
		known, err := schemas.K3Properties(contract)
		if err != nil {
			return nil, err
		}
		r.add(checkRequirements(src.Catalog, catPos, table, cv, opts.PlatformVersion, known)...)
		r.add(checkBackupDrivers(src.Catalog, catPos)...)
	}
	charts := loadCharts(src)
	for _, p := range charts.paths() {
		r.add(charts[p].problems...)
	}

	if src.HasADs {
		adc, err := newADCheck(contract)
		if err != nil {
			return nil, err
		}
		r.add(adc.checkADs(src.ADs, src.Catalog, catPos, charts)...)
		// The check build makes covers the K1 rules' ground too: run it
		// once they pass, so that one mistake is one finding.
		if slices.ContainsFunc(r.Findings, func(f Finding) bool {
			return f.Severity == Error && (strings.HasPrefix(f.RuleID, "K1-") || f.RuleID == "CAT-catalog")
		}) {
			r.Skipped = append(r.Skipped, definitionsRule+": not run while K1 or CAT-catalog errors stand (cozypkg build would refuse the catalog for them)")
		} else {
			r.add(checkDefinitions(src, catPos)...)
		}
	} else {
		r.Skipped = append(r.Skipped, "K1, K6: the artifact carries no ApplicationDefinitions (no definitions layers: its catalog has no applicationdefinitions/, or an older cozypkg built it); check the catalog directory for them")
	}

	k2, err := schemas.K2Keys(contract)
	if err != nil {
		return nil, err
	}
	r.add(checkK2(charts, k2, contract)...)
	r.add(checkK4(src.Catalog, charts)...)
	r.add(checkUnquotedStrings(charts)...)
	if opts.Previous != nil {
		r.Previous = opts.Previous.Name
		if opts.Previous.Catalog == nil {
			r.Skipped = append(r.Skipped, fmt.Sprintf("K4-key-removed, K4-key-renamed: the previous version %s has no valid catalog.yaml", opts.Previous.Name))
		} else {
			r.add(checkK4Diff(src, opts.Previous, charts, loadCharts(opts.Previous))...)
		}
	}
	helpers, err := schemas.K5Helpers(contract)
	if err != nil {
		return nil, err
	}
	r.add(checkK5(charts, helpers, opts.PlatformVersion, contract)...)
	rights, skipped := checkApplicationRights(src, charts)
	r.add(rights...)
	r.Skipped = append(r.Skipped, skipped...)
	r.sort()
	return r, nil
}

// CheckDir loads the catalog directory dir and checks it.
func CheckDir(dir string, opts Options) (*Report, error) {
	src, err := LoadDir(dir)
	if err != nil {
		return nil, err
	}
	return Check(src, opts)
}

// CheckADFiles runs the K1 and K6 rules on ApplicationDefinition files
// outside a catalog (no catalog.yaml, no charts): what a cluster's ADs can
// be checked for on their own. Paths in findings are relative to root.
func CheckADFiles(root string, files []string, opts Options) (*Report, error) {
	src, err := LoadADFiles(root, files)
	if err != nil {
		return nil, err
	}
	return Check(src, opts)
}
