package backuptest

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// DriverNamespace holds the drivers' Leases in these tests: Client
// installs it when given it.
const DriverNamespace = "cozy-backup-drivers"

// LeaseName is the name of driver's Lease, as the SDK names it
// (sdk/backup/driver.LeaseName).
func LeaseName(driver string) string { return "backup-driver-" + driver }

// RegisterDriver writes what a driver's SDK writes when it starts: the
// Lease in DriverNamespace held by name-0 (acquired and renewed at renew,
// for leaseSeconds) and the BackupDriver name serving kinds and speaking
// protocols (catalog "test", version 0.0.1). Either existing already fails
// the test; both are deleted at its end.
func RegisterDriver(t testing.TB, c client.Client, name string, kinds, protocols []string, renew time.Time, leaseSeconds int32) *backupsv1alpha1.BackupDriver {
	t.Helper()
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: DriverNamespace, Name: LeaseName(name),
			Labels: map[string]string{backupsv1alpha1.LabelDriver: name}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(name + "-0"),
			LeaseDurationSeconds: ptr.To(leaseSeconds),
			AcquireTime:          &metav1.MicroTime{Time: renew},
			RenewTime:            &metav1.MicroTime{Time: renew},
		},
	}
	if err := c.Create(Context(t), lease); err != nil {
		t.Fatalf("create Lease: %v", err)
	}
	d := &backupsv1alpha1.BackupDriver{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: backupsv1alpha1.BackupDriverSpec{
			StrategyKinds: kinds, ProtocolVersions: protocols,
			Catalog: "test", Version: "0.0.1",
			Lease: backupsv1alpha1.LeaseRef{Namespace: DriverNamespace, Name: lease.Name},
		},
	}
	if err := c.Create(Context(t), d); err != nil {
		t.Fatalf("create BackupDriver: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = c.Delete(ctx, d)
		_ = c.Delete(ctx, lease)
	})
	return d
}

// RenewLease renews the Lease of driver name at now, as its SDK would.
func RenewLease(t testing.TB, c client.Client, name string, now time.Time) {
	t.Helper()
	lease := &coordinationv1.Lease{}
	if err := c.Get(Context(t), client.ObjectKey{Namespace: DriverNamespace, Name: LeaseName(name)}, lease); err != nil {
		t.Fatal(err)
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: now}
	if err := c.Update(Context(t), lease); err != nil {
		t.Fatal(err)
	}
}

// ApplyDriver creates or updates, as a driver's SDK would, the
// BackupDriver name with spec (its Lease reference set to the Lease in
// DriverNamespace), then that Lease: held by name-0, renewed at renew, for
// leaseSeconds. Both are kept after the test, so tests sharing a control
// plane may register the same driver again, changed (a Lease expired or
// live, other capabilities).
func ApplyDriver(t testing.TB, c client.Client, name string, spec backupsv1alpha1.BackupDriverSpec, renew time.Time, leaseSeconds int32) {
	t.Helper()
	ctx := Context(t)
	spec.Lease = backupsv1alpha1.LeaseRef{Namespace: DriverNamespace, Name: LeaseName(name)}
	d := &backupsv1alpha1.BackupDriver{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := ctrl.CreateOrUpdate(ctx, c, d, func() error {
		d.Spec = spec
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: DriverNamespace, Name: LeaseName(name)}}
	if _, err := ctrl.CreateOrUpdate(ctx, c, l, func() error {
		l.Labels = map[string]string{backupsv1alpha1.LabelDriver: name}
		l.Spec.HolderIdentity = ptr.To(name + "-0")
		l.Spec.LeaseDurationSeconds = ptr.To(leaseSeconds)
		l.Spec.RenewTime = &metav1.MicroTime{Time: renew}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
