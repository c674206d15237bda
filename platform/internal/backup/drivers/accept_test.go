package drivers_test

import (
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/backupaccess"
	"cozystack.io/platform/internal/backup/drivers"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// Decide applies contract k7's registration rules in order; each refusal
// names the rule (reason) and the owner in its message.
func TestDecide(t *testing.T) {
	const cnpgSA = "system:serviceaccount:cozy-cnpg-backup-driver:cnpg-backup-driver"
	services := &v1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Name: "services"},
		Spec: v1alpha1.PackageSpec{SourceRef: v1alpha1.PackageSourceReference{Name: "services"}}}
	source := &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Name: "services"}, Status: v1alpha1.PackageSourceStatus{
		Catalog: &v1alpha1.CatalogInfo{Name: "services"},
		Variants: []v1alpha1.PackageVariant{{Name: "default", Components: []v1alpha1.PackageComponent{
			{Name: "cnpg-backup-driver", Namespace: "cozy-cnpg-backup-driver", BackupStrategyKinds: []string{"CNPG"}},
			{Name: "postgres-operator", Namespace: "cozy-postgres-operator"},
		}}}}}
	disabled := services.DeepCopy()
	disabled.Spec.Components = map[string]v1alpha1.PackageComponentSettings{"cnpg-backup-driver": {Enabled: ptr.To(false)}}
	lease := func(ns, name, label string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{backupsv1alpha1.LabelDriver: label}}}
	}
	reg := func(name, catalog, leaseNS, leaseName string, kinds ...string) *backupsv1alpha1.BackupDriver {
		return &backupsv1alpha1.BackupDriver{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: backupsv1alpha1.BackupDriverSpec{
			StrategyKinds: kinds, Catalog: catalog, Lease: backupsv1alpha1.LeaseRef{Namespace: leaseNS, Name: leaseName}}}
	}
	own := reg("cnpg", "services", "cozy-cnpg-backup-driver", "backup-driver-cnpg", "CNPG")
	catalogFacts := func(d *backupsv1alpha1.BackupDriver) drivers.Facts {
		return drivers.Facts{Driver: d, Writer: cnpgSA, NamespacePackage: "services", Package: services, Source: source,
			Lease: lease(d.Spec.Lease.Namespace, d.Spec.Lease.Name, d.Name)}
	}
	for _, tc := range []struct {
		name    string
		facts   drivers.Facts
		reason  string
		message []string
		catalog string
	}{
		{"catalog driver", catalogFacts(own), backupsv1alpha1.ReasonAccepted, []string{"cnpg-backup-driver", "services"}, "services"},
		{"spec.catalog empty", catalogFacts(reg("cnpg", "", "cozy-cnpg-backup-driver", "backup-driver-cnpg", "CNPG")),
			backupsv1alpha1.ReasonAccepted, nil, "services"},
		{"Lease not created yet", func() drivers.Facts { f := catalogFacts(own); f.Lease = nil; return f }(),
			backupsv1alpha1.ReasonAccepted, nil, "services"},
		{"no writer", drivers.Facts{Driver: own}, backupsv1alpha1.ReasonWriterUnknown,
			[]string{backupsv1alpha1.AnnotationRegisteredBy, "backup-driver-writer.cozystack.io"}, ""},
		{"operator", drivers.Facts{Driver: reg("test", "test", "anywhere", "backup-driver-test", "Anything"), Writer: "cozystack-admin"},
			backupsv1alpha1.ReasonAccepted, []string{"cozystack-admin"}, ""},
		{"platform's Job driver", drivers.Facts{Driver: reg("job", "", "cozy-system", "backup-driver-job", "Job"), Writer: backupaccess.PlatformServiceAccount},
			backupsv1alpha1.ReasonAccepted, nil, ""},
		{"catalog claims the job name", catalogFacts(reg("job", "", "cozy-cnpg-backup-driver", "backup-driver-job", "CNPG")),
			backupsv1alpha1.ReasonReservedForPlatform, []string{"job", cnpgSA}, ""},
		{"catalog claims kind Job", catalogFacts(reg("cnpg", "", "cozy-cnpg-backup-driver", "backup-driver-cnpg", "CNPG", "Job")),
			backupsv1alpha1.ReasonReservedForPlatform, []string{"Job"}, ""},
		{"namespace of no Package", func() drivers.Facts { f := catalogFacts(own); f.NamespacePackage, f.Package = "", nil; return f }(),
			backupsv1alpha1.ReasonWriterNotInCatalog, []string{"cozy-cnpg-backup-driver/cnpg-backup-driver"}, ""},
		{"annotation names a missing Package", func() drivers.Facts { f := catalogFacts(own); f.Package = nil; return f }(),
			backupsv1alpha1.ReasonWriterNotInCatalog, []string{`"services"`}, ""},
		{"no component in the namespace", func() drivers.Facts {
			f := catalogFacts(reg("cnpg", "", "cozy-other", "backup-driver-cnpg", "CNPG"))
			f.Writer = "system:serviceaccount:cozy-other:x"
			return f
		}(), backupsv1alpha1.ReasonWriterNotInCatalog, []string{"Package services", "cozy-other"}, ""},
		{"component disabled", func() drivers.Facts { f := catalogFacts(own); f.Package = disabled; return f }(),
			backupsv1alpha1.ReasonWriterNotInCatalog, nil, ""},
		{"undeclared kind", catalogFacts(reg("cnpg", "", "cozy-cnpg-backup-driver", "backup-driver-cnpg", "CNPG", "Velero")),
			backupsv1alpha1.ReasonKindNotDeclared, []string{"[Velero]", "cnpg-backup-driver", "catalog services", "[CNPG]"}, ""},
		{"another catalog's name", catalogFacts(reg("cnpg", "virtualization", "cozy-cnpg-backup-driver", "backup-driver-cnpg", "CNPG")),
			backupsv1alpha1.ReasonCatalogMismatch, []string{"virtualization", "catalog services", "Package services"}, ""},
		{"another driver's Lease", func() drivers.Facts {
			f := catalogFacts(reg("cnpg", "", "cozy-velero-backup-driver", "backup-driver-velero", "CNPG"))
			f.Lease = lease("cozy-velero-backup-driver", "backup-driver-velero", "velero")
			return f
		}(), backupsv1alpha1.ReasonLeaseNotOwned, []string{"cozy-velero-backup-driver/backup-driver-velero", "BackupDriver velero's", "backup-driver-cnpg"}, ""},
		{"a Lease of its name elsewhere", catalogFacts(reg("cnpg", "", "cozy-velero-backup-driver", "backup-driver-cnpg", "CNPG")),
			backupsv1alpha1.ReasonLeaseNotOwned, []string{"its own namespace cozy-cnpg-backup-driver"}, ""},
		{"a Lease labelled for another driver", func() drivers.Facts {
			f := catalogFacts(own)
			f.Lease = lease("cozy-cnpg-backup-driver", "backup-driver-cnpg", "mariadb")
			return f
		}(), backupsv1alpha1.ReasonLeaseNotOwned, []string{"mariadb"}, ""},
		{"operator, another driver's Lease", drivers.Facts{Driver: reg("test", "", "x", "backup-driver-other", "Anything"), Writer: "cozystack-admin"},
			backupsv1alpha1.ReasonLeaseNotOwned, []string{"backup-driver-test"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := drivers.Decide(tc.facts)
			if a.Reason != tc.reason {
				t.Fatalf("reason %s (%s), want %s", a.Reason, a.Message, tc.reason)
			}
			if a.Accepted() != (tc.reason == backupsv1alpha1.ReasonAccepted) || a.Catalog != tc.catalog {
				t.Errorf("accepted %v catalog %q, want catalog %q", a.Accepted(), a.Catalog, tc.catalog)
			}
			for _, m := range append(tc.message, tc.facts.Driver.Name) {
				if !strings.Contains(a.Message, m) {
					t.Errorf("message %q lacks %q", a.Message, m)
				}
			}
		})
	}
}
