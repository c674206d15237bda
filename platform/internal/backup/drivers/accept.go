package drivers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/backupaccess"
	"cozystack.io/platform/internal/operator/names"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// The platform's built-in Job driver: its name and kind are reserved
// (ReasonReservedForPlatform). platform/internal/backup/jobdriver uses
// the same values.
const (
	reservedName = "job"
	reservedKind = "Job"
)

// Acceptance is the platform's verdict on one registration (contract k7,
// "Registration"): Reason is backupsv1alpha1.ReasonAccepted or one of the
// refusals of backupsv1alpha1.AcceptedReasons, with a message naming the
// rule, the owner and the fix. Catalog, Package and Component are what
// the platform found ships the driver (empty for the platform's and a
// cluster operator's registrations).
type Acceptance struct {
	Reason, Message             string
	Catalog, Package, Component string
}

// Accepted reports whether jobs may be bound to the registration.
func (a Acceptance) Accepted() bool { return a.Reason == backupsv1alpha1.ReasonAccepted }

// Facts are what Decide needs about one registration, read by Accept.
type Facts struct {
	Driver *backupsv1alpha1.BackupDriver
	// Writer is the annotation backups.cozystack.io/registered-by.
	Writer string
	// NamespacePackage is the annotation cozystack.io/package of the
	// writer ServiceAccount's namespace ("" when it has none or does not
	// exist).
	NamespacePackage string
	// Package is that Package, nil when missing; Source its PackageSource,
	// nil when missing.
	Package *v1alpha1.Package
	Source  *v1alpha1.PackageSource
	// Lease is the Lease spec.lease names, nil when missing.
	Lease *coordinationv1.Lease
}

// Decide applies the registration rules of contract k7 ("Registration")
// to f, in this order: the writer is recorded (WriterUnknown); a writer
// that is a ServiceAccount other than the platform's is a catalog's
// driver: not the Job driver (ReservedForPlatform), in a namespace of a
// Package's component (WriterNotInCatalog), serving only kinds that
// component declares (KindNotDeclared), naming no other catalog
// (CatalogMismatch); every registration's Lease is its own: named
// backup-driver-<name>, not labelled for another driver, and for a
// catalog's driver in its writer's namespace (LeaseNotOwned). A writer that
// is the platform's ServiceAccount, or a person (cluster operator; RBAC
// gives backupdrivers create to no one else), is trusted for its kinds.
func Decide(f Facts) Acceptance {
	d := f.Driver
	refuse := func(reason, format string, args ...any) Acceptance {
		return Acceptance{Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	if f.Writer == "" {
		return refuse(backupsv1alpha1.ReasonWriterUnknown,
			"BackupDriver %s has no annotation %s: the platform's admission policy backup-driver-writer.cozystack.io records the creator; install it (cozystack-controller applies it at start) and re-create the registration",
			d.Name, backupsv1alpha1.AnnotationRegisteredBy)
	}
	ns, sa, err := serviceaccount.SplitUsername(f.Writer)
	catalogDriver := err == nil && f.Writer != backupaccess.PlatformServiceAccount
	if catalogDriver && (d.Name == reservedName || d.Serves(reservedKind)) {
		return refuse(backupsv1alpha1.ReasonReservedForPlatform,
			"BackupDriver %s (registered by %s): the name %s and the strategy kind %s are the platform's built-in Job driver's; register the driver under a name of its own, for the kinds its catalog component declares",
			d.Name, f.Writer, reservedName, reservedKind)
	}
	a := Acceptance{Reason: backupsv1alpha1.ReasonAccepted}
	if catalogDriver {
		found, refusal := component(f, ns, sa)
		if refusal != nil {
			return *refusal
		}
		a = found
	}
	if r := leaseRefusal(f, ns, catalogDriver); r != nil {
		return *r
	}
	if catalogDriver {
		a.Message = fmt.Sprintf("BackupDriver %s is component %s of catalog %s (Package %s), which declares its kinds [%s]",
			d.Name, a.Component, a.Catalog, a.Package, strings.Join(d.Spec.StrategyKinds, ", "))
	} else {
		a.Message = fmt.Sprintf("BackupDriver %s was registered by %s, the platform or a cluster operator", d.Name, f.Writer)
	}
	return a
}

// component finds the catalog component installed in namespace ns of the
// writer (ServiceAccount sa) and checks the registration's kinds and
// spec.catalog against it.
func component(f Facts, ns, sa string) (Acceptance, *Acceptance) {
	d := f.Driver
	refuse := func(reason, format string, args ...any) (Acceptance, *Acceptance) {
		return Acceptance{}, &Acceptance{Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	who := fmt.Sprintf("its writer, ServiceAccount %s/%s,", ns, sa)
	if f.NamespacePackage == "" || f.Package == nil {
		return refuse(backupsv1alpha1.ReasonWriterNotInCatalog,
			"BackupDriver %s: %s is not in a namespace of a Package (namespace %s, annotation %s=%q): a driver registers from the namespace of its catalog component",
			d.Name, who, ns, names.AnnotationPackage, f.NamespacePackage)
	}
	p := f.Package
	var comps []v1alpha1.PackageComponent
	if s := f.Source; s != nil {
		variant := p.Spec.Variant
		if variant == "" {
			variant = "default"
		}
		for _, v := range s.Status.Variants {
			if v.Name != variant {
				continue
			}
			for _, c := range v.Components {
				if c.Namespace == ns && p.Spec.Components[c.Name].IsEnabled() {
					comps = append(comps, c)
				}
			}
		}
	}
	if len(comps) == 0 {
		return refuse(backupsv1alpha1.ReasonWriterNotInCatalog,
			"BackupDriver %s: %s is in namespace %s of Package %s, but no component of that Package is installed there (PackageSource %s): a driver registers from the namespace of its catalog component",
			d.Name, who, ns, p.Name, p.Spec.SourceRef.Name)
	}
	catalog := p.Spec.SourceRef.Name
	if f.Source.Status.Catalog != nil && f.Source.Status.Catalog.Name != "" {
		catalog = f.Source.Status.Catalog.Name
	}
	// The component declaring the most of the kinds (all, when one does).
	best, missing := comps[0], d.Spec.StrategyKinds
	for _, c := range comps {
		var m []string
		for _, k := range d.Spec.StrategyKinds {
			if !slices.Contains(c.BackupStrategyKinds, k) {
				m = append(m, k)
			}
		}
		if len(m) < len(missing) {
			best, missing = c, m
		}
		if len(m) == 0 {
			break
		}
	}
	if len(missing) > 0 {
		return refuse(backupsv1alpha1.ReasonKindNotDeclared,
			"BackupDriver %s serves [%s], which component %s of catalog %s (Package %s) does not declare (its backupStrategyKinds: [%s]): declare them in catalog.yaml or remove them from the registration",
			d.Name, strings.Join(missing, ", "), best.Name, catalog, p.Name, strings.Join(best.BackupStrategyKinds, ", "))
	}
	if d.Spec.Catalog != "" && d.Spec.Catalog != catalog {
		return refuse(backupsv1alpha1.ReasonCatalogMismatch,
			"BackupDriver %s says spec.catalog %s, but %s is in namespace %s of component %s of catalog %s (Package %s): set spec.catalog to %s or leave it empty",
			d.Name, d.Spec.Catalog, who, ns, best.Name, catalog, p.Name, catalog)
	}
	return Acceptance{Reason: backupsv1alpha1.ReasonAccepted, Catalog: catalog, Package: p.Name, Component: best.Name}, nil
}

// leaseRefusal checks that spec.lease is the driver's own Lease.
func leaseRefusal(f Facts, ns string, catalogDriver bool) *Acceptance {
	d := f.Driver
	l := d.Spec.Lease
	own := LeaseName(d.Name)
	var why string
	switch {
	case l.Name != own:
		why = fmt.Sprintf("a driver renews the Lease named %s", own)
	case catalogDriver && l.Namespace != ns:
		why = fmt.Sprintf("a catalog's driver renews its Lease in its own namespace %s (its ServiceAccount's)", ns)
	case f.Lease != nil && f.Lease.Labels[backupsv1alpha1.LabelDriver] != d.Name:
		why = fmt.Sprintf("that Lease is labelled %s=%q, another driver's", backupsv1alpha1.LabelDriver, f.Lease.Labels[backupsv1alpha1.LabelDriver])
	default:
		return nil
	}
	if f.Lease != nil && f.Lease.Labels[backupsv1alpha1.LabelDriver] != "" && f.Lease.Labels[backupsv1alpha1.LabelDriver] != d.Name {
		why += fmt.Sprintf("; it is BackupDriver %s's", f.Lease.Labels[backupsv1alpha1.LabelDriver])
	}
	return &Acceptance{Reason: backupsv1alpha1.ReasonLeaseNotOwned, Message: fmt.Sprintf(
		"BackupDriver %s names Lease %s/%s, not its own: %s; point spec.lease at %s/%s", d.Name, l.Namespace, l.Name, why, leaseNamespace(ns, l.Namespace, catalogDriver), own)}
}

func leaseNamespace(writer, named string, catalogDriver bool) string {
	if catalogDriver {
		return writer
	}
	return named
}

// LeaseName is the name of the Lease of the driver named driver, as the
// SDK names it (sdk/backup/driver.LeaseName).
func LeaseName(driver string) string { return "backup-driver-" + driver }

// Accept reads the Facts of registration d through r.Reader and decides
// (Decide). Errors are the Reader's, other than NotFound.
func (r *Resolver) Accept(ctx context.Context, d *backupsv1alpha1.BackupDriver) (Acceptance, error) {
	f := Facts{Driver: d, Writer: d.Annotations[backupsv1alpha1.AnnotationRegisteredBy]}
	lease := &coordinationv1.Lease{}
	if err := r.Reader.Get(ctx, types.NamespacedName{Namespace: d.Spec.Lease.Namespace, Name: d.Spec.Lease.Name}, lease); err == nil {
		f.Lease = lease
	} else if !apierrors.IsNotFound(err) {
		return Acceptance{}, err
	}
	if ns, _, err := serviceaccount.SplitUsername(f.Writer); err == nil && f.Writer != backupaccess.PlatformServiceAccount {
		var n corev1.Namespace
		if err := r.Reader.Get(ctx, types.NamespacedName{Name: ns}, &n); err == nil {
			f.NamespacePackage = n.Annotations[names.AnnotationPackage]
		} else if !apierrors.IsNotFound(err) {
			return Acceptance{}, err
		}
		if f.NamespacePackage != "" {
			p := &v1alpha1.Package{}
			// A claim recorded with a UID is the Package of that UID only:
			// a Package re-created under the name of a deleted one does
			// not inherit its namespace (docs/operator/catalogs.md, "Ownership").
			uid := n.Annotations[names.AnnotationPackageUID]
			if err := r.Reader.Get(ctx, types.NamespacedName{Name: f.NamespacePackage}, p); err == nil && (uid == "" || uid == string(p.UID)) {
				f.Package = p
			} else if err != nil && !apierrors.IsNotFound(err) {
				return Acceptance{}, err
			}
		}
		if f.Package != nil {
			s := &v1alpha1.PackageSource{}
			if err := r.Reader.Get(ctx, types.NamespacedName{Name: f.Package.Spec.SourceRef.Name}, s); err == nil {
				f.Source = s
			} else if !apierrors.IsNotFound(err) {
				return Acceptance{}, err
			}
		}
	}
	return Decide(f), nil
}
