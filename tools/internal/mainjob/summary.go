package mainjob

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// row is one application in the summary table.
type row struct {
	kind, name, ready, version string
	installer                  string // the identity helm-controller installed it as
	objects                    []string
}

// summary prints the applications the job created as a table.
func (j *job) summary() {
	w := tabwriter.NewWriter(j.cfg.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tNAMESPACE\tNAME\tREADY\tCHART VERSION\tINSTALLED AS\tOBJECTS")
	for _, r := range j.rows {
		objs := strings.Join(r.objects, ",")
		if objs == "" {
			objs = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.kind, r.namespace(), r.name, r.ready, r.version, r.installer, objs)
	}
	_ = w.Flush()
	if len(j.backups) == 0 {
		return
	}
	fmt.Fprintln(j.cfg.Out)
	w = tabwriter.NewWriter(j.cfg.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tNAMESPACE\tNAME\tAPPLICATION\tDRIVER\tSTATUS\tBACKEND OBJECT")
	for _, b := range j.backups {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.kind, TenantNS, b.name, b.application, b.driver, b.phase, b.backend)
	}
	_ = w.Flush()
}

func (r row) namespace() string {
	if r.kind == "Tenant" {
		return RootNamespace
	}
	return TenantNS
}

// Summary is what the job leaves for a person to look at.
func Summary() string {
	return strings.Join([]string{
		"kubectl get packagesources,packages",
		"kubectl get tenants -n " + RootNamespace,
		"kubectl get postgreses,vminstances -n " + TenantNS,
		"kubectl get clusters.postgresql.cnpg.io,virtualmachines.kubevirt.io -n " + TenantNS,
		"kubectl get plans,backupjobs,backups,restorejobs -n " + TenantNS,
		"kubectl get backupclasses,backupdrivers",
		"kubectl get helmreleases -A",
	}, "\n")
}
