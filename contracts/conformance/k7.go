package conformance

import (
	"fmt"
	"slices"
	"strings"

	"cozystack.io/contracts/artifact"
)

// checkBackupDrivers checks catalog.yaml's backup strategy kinds against
// the components that serve them (contract K7,
// contracts/schemas/v1alpha1/k7-backup-driver.md, "Kinds"): a provided kind
// no component serves would leave every job of it waiting
// (DriverNotInstalled or UnknownStrategyKind), a served kind the catalog
// does not provide is a claim on another catalog's kind, and two
// components of one variant serving a kind put its jobs in DriverConflict.
func checkBackupDrivers(cat *artifact.Catalog, pos positions) []Finding {
	var out []Finding
	provided := cat.Provides.BackupStrategyKinds
	served := map[string]bool{}
	for vi, v := range cat.Variants {
		byKind := map[string]string{}
		drivers := false
		for ci, c := range v.Components {
			if len(c.BackupStrategyKinds) > 0 {
				drivers = true
			}
			for ki, k := range c.BackupStrategyKinds {
				path := []string{"variants", fmt.Sprint(vi), "components", fmt.Sprint(ci), "backupStrategyKinds", fmt.Sprint(ki)}
				f := Finding{RuleID: "K7-undeclared-kind", Severity: Error, File: artifact.CatalogFile, Line: pos.line(path...),
					Path: fmt.Sprintf("variants[%d].components[%d].backupStrategyKinds[%d]", vi, ci, ki)}
				switch {
				case !slices.Contains(provided, k):
					f.Message = fmt.Sprintf("component %s serves backup strategy kind %s, which provides.backupStrategyKinds %v does not list: the platform would bind jobs of another catalog's kind to it", c.Name, k, provided)
					f.Fix = fmt.Sprintf("add %s to provides.backupStrategyKinds, or remove it from the component", k)
					out = append(out, f)
				case byKind[k] != "":
					f.Message = fmt.Sprintf("components %s and %s of variant %s both serve backup strategy kind %s: their registrations conflict and no job of the kind runs (DriverConflict)", byKind[k], c.Name, v.Name, k)
					f.Fix = fmt.Sprintf("serve %s from one component", k)
					out = append(out, f)
				default:
					byKind[k] = c.Name
					served[k] = true
				}
			}
		}
		if !drivers {
			continue
		}
		for ki, k := range provided {
			if byKind[k] == "" {
				out = append(out, Finding{RuleID: "K7-driver-missing", Severity: Error, File: artifact.CatalogFile,
					Line: pos.line("provides", "backupStrategyKinds", fmt.Sprint(ki)), Path: fmt.Sprintf("provides.backupStrategyKinds[%d]", ki),
					Message: fmt.Sprintf("variant %s installs backup drivers but none serves %s: its jobs would wait for a driver that never registers", v.Name, k),
					Fix:     fmt.Sprintf("list %s in the backupStrategyKinds of the variant's driver component", k)})
			}
		}
	}
	for ki, k := range provided {
		if !served[k] && !slices.ContainsFunc(out, func(f Finding) bool { return f.RuleID == "K7-driver-missing" && strings.Contains(f.Message, " "+k+":") }) {
			out = append(out, Finding{RuleID: "K7-driver-missing", Severity: Error, File: artifact.CatalogFile,
				Line: pos.line("provides", "backupStrategyKinds", fmt.Sprint(ki)), Path: fmt.Sprintf("provides.backupStrategyKinds[%d]", ki),
				Message: fmt.Sprintf("the catalog provides backup strategy kind %s but no component serves it: its jobs would fail with UnknownStrategyKind", k),
				Fix:     fmt.Sprintf("add the driver's component with backupStrategyKinds: [%s], or drop %s from provides", k, k)})
		}
	}
	return out
}
