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
		name string
		// why is the rule the case pins.
		why    string
		facts  drivers.Facts
		reason string
		// message are substrings the message must hold, besides the
		// driver's name.
		message []string
		// catalog is the catalog the registration is accepted for ("":
		// none).
		catalog string
	}{
		{
			name:    "catalog driver",
			why:     "a catalog's driver, written by its component's ServiceAccount in its namespace, is accepted for that catalog",
			facts:   catalogFacts(own),
			reason:  backupsv1alpha1.ReasonAccepted,
			message: []string{"cnpg-backup-driver", "services"},
			catalog: "services",
		},
		{
			name:    "spec.catalog empty",
			why:     "spec.catalog may be left to the writer's catalog",
			facts:   catalogFacts(reg("cnpg", "", "cozy-cnpg-backup-driver", "backup-driver-cnpg", "CNPG")),
			reason:  backupsv1alpha1.ReasonAccepted,
			catalog: "services",
		},
		{
			name:    "Lease not created yet",
			why:     "a registration is judged before its driver's first heartbeat",
			facts:   func() drivers.Facts { f := catalogFacts(own); f.Lease = nil; return f }(),
			reason:  backupsv1alpha1.ReasonAccepted,
			catalog: "services",
		},
		{
			name:    "no writer",
			why:     "a registration without the admission policy's writer annotation is refused, naming the annotation and the policy",
			facts:   drivers.Facts{Driver: own},
			reason:  backupsv1alpha1.ReasonWriterUnknown,
			message: []string{backupsv1alpha1.AnnotationRegisteredBy, "backup-driver-writer.cozystack.io"},
		},
		{
			name:    "operator",
			why:     "a cluster operator may register any driver, outside every catalog",
			facts:   drivers.Facts{Driver: reg("test", "test", "anywhere", "backup-driver-test", "Anything"), Writer: "cozystack-admin"},
			reason:  backupsv1alpha1.ReasonAccepted,
			message: []string{"cozystack-admin"},
		},
		{
			name:   "platform's Job driver",
			why:    "the platform's own ServiceAccount registers the Job driver",
			facts:  drivers.Facts{Driver: reg("job", "", "cozy-system", "backup-driver-job", "Job"), Writer: backupaccess.PlatformServiceAccount},
			reason: backupsv1alpha1.ReasonAccepted,
		},
		{
			name:    "catalog claims the job name",
			why:     "the name job is the platform's: a catalog's registration of it is refused, naming the writer",
			facts:   catalogFacts(reg("job", "", "cozy-cnpg-backup-driver", "backup-driver-job", "CNPG")),
			reason:  backupsv1alpha1.ReasonReservedForPlatform,
			message: []string{"job", cnpgSA},
		},
		{
			name:    "catalog claims kind Job",
			why:     "the strategy kind Job is the platform's",
			facts:   catalogFacts(reg("cnpg", "", "cozy-cnpg-backup-driver", "backup-driver-cnpg", "CNPG", "Job")),
			reason:  backupsv1alpha1.ReasonReservedForPlatform,
			message: []string{"Job"},
		},
		{
			name:    "namespace of no Package",
			why:     "a ServiceAccount in a namespace no Package installed writes for no catalog",
			facts:   func() drivers.Facts { f := catalogFacts(own); f.NamespacePackage, f.Package = "", nil; return f }(),
			reason:  backupsv1alpha1.ReasonWriterNotInCatalog,
			message: []string{"cozy-cnpg-backup-driver/cnpg-backup-driver"},
		},
		{
			name:    "annotation names a missing Package",
			why:     "the namespace's Package annotation must name an existing Package",
			facts:   func() drivers.Facts { f := catalogFacts(own); f.Package = nil; return f }(),
			reason:  backupsv1alpha1.ReasonWriterNotInCatalog,
			message: []string{`"services"`},
		},
		{
			name: "no component in the namespace",
			why:  "the writer must be the ServiceAccount of a component of the Package",
			facts: func() drivers.Facts {
				f := catalogFacts(reg("cnpg", "", "cozy-other", "backup-driver-cnpg", "CNPG"))
				f.Writer = "system:serviceaccount:cozy-other:x"
				return f
			}(),
			reason:  backupsv1alpha1.ReasonWriterNotInCatalog,
			message: []string{"Package services", "cozy-other"},
		},
		{
			name:   "component disabled",
			why:    "a disabled component writes for no catalog",
			facts:  func() drivers.Facts { f := catalogFacts(own); f.Package = disabled; return f }(),
			reason: backupsv1alpha1.ReasonWriterNotInCatalog,
		},
		{
			name:    "undeclared kind",
			why:     "a catalog's driver serves only the kinds its catalog declares (provides.backupStrategyKinds), both lists named",
			facts:   catalogFacts(reg("cnpg", "", "cozy-cnpg-backup-driver", "backup-driver-cnpg", "CNPG", "Velero")),
			reason:  backupsv1alpha1.ReasonKindNotDeclared,
			message: []string{"[Velero]", "cnpg-backup-driver", "catalog services", "[CNPG]"},
		},
		{
			name:    "another catalog's name",
			why:     "spec.catalog must be the writer's catalog, both named",
			facts:   catalogFacts(reg("cnpg", "virtualization", "cozy-cnpg-backup-driver", "backup-driver-cnpg", "CNPG")),
			reason:  backupsv1alpha1.ReasonCatalogMismatch,
			message: []string{"virtualization", "catalog services", "Package services"},
		},
		{
			name: "another driver's Lease",
			why:  "spec.lease must be the driver's own Lease, not another registration's",
			facts: func() drivers.Facts {
				f := catalogFacts(reg("cnpg", "", "cozy-velero-backup-driver", "backup-driver-velero", "CNPG"))
				f.Lease = lease("cozy-velero-backup-driver", "backup-driver-velero", "velero")
				return f
			}(),
			reason:  backupsv1alpha1.ReasonLeaseNotOwned,
			message: []string{"cozy-velero-backup-driver/backup-driver-velero", "BackupDriver velero's", "backup-driver-cnpg"},
		},
		{
			name:    "a Lease of its name elsewhere",
			why:     "a catalog's driver's Lease lives in its own namespace",
			facts:   catalogFacts(reg("cnpg", "", "cozy-velero-backup-driver", "backup-driver-cnpg", "CNPG")),
			reason:  backupsv1alpha1.ReasonLeaseNotOwned,
			message: []string{"its own namespace cozy-cnpg-backup-driver"},
		},
		{
			name: "a Lease labelled for another driver",
			why:  "the Lease's driver label must name this registration",
			facts: func() drivers.Facts {
				f := catalogFacts(own)
				f.Lease = lease("cozy-cnpg-backup-driver", "backup-driver-cnpg", "mariadb")
				return f
			}(),
			reason:  backupsv1alpha1.ReasonLeaseNotOwned,
			message: []string{"mariadb"},
		},
		{
			name:    "operator, another driver's Lease",
			why:     "an operator's registration too must name its own Lease (backup-driver-<name>)",
			facts:   drivers.Facts{Driver: reg("test", "", "x", "backup-driver-other", "Anything"), Writer: "cozystack-admin"},
			reason:  backupsv1alpha1.ReasonLeaseNotOwned,
			message: []string{"backup-driver-test"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := drivers.Decide(tc.facts)
			if a.Reason != tc.reason {
				t.Fatalf("reason %s (%s), want %s: %s", a.Reason, a.Message, tc.reason, tc.why)
			}
			if a.Accepted() != (tc.reason == backupsv1alpha1.ReasonAccepted) || a.Catalog != tc.catalog {
				t.Errorf("accepted %v catalog %q, want catalog %q: %s", a.Accepted(), a.Catalog, tc.catalog, tc.why)
			}
			for _, m := range append(tc.message, tc.facts.Driver.Name) {
				if !strings.Contains(a.Message, m) {
					t.Errorf("message %q lacks %q: %s", a.Message, m, tc.why)
				}
			}
		})
	}
}
