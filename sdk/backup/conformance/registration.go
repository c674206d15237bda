package conformance

import (
	"context"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// testRegistration: a running replica registers the driver (contract k7,
// "Binding") with a live Lease.
func testRegistration(t *testing.T, e *env) {
	e.replica(t, "registration-0", nil)
	e.poll(t, "BackupDriver "+e.s.Driver+" with a live Lease", func(ctx context.Context) (bool, error) {
		d := &v1alpha1.BackupDriver{}
		if err := e.c.Get(ctx, types.NamespacedName{Name: e.s.Driver}, d); err != nil {
			return false, err
		}
		if !d.Serves(e.s.StrategyKind) || !slices.Contains(d.Spec.ProtocolVersions, v1alpha1.ProtocolVersion) {
			t.Fatalf("BackupDriver %s serves %v speaking %v, want %s and %s", d.Name, d.Spec.StrategyKinds,
				d.Spec.ProtocolVersions, e.s.StrategyKind, v1alpha1.ProtocolVersion)
		}
		l := &coordinationv1.Lease{}
		if err := e.c.Get(ctx, types.NamespacedName{Namespace: d.Spec.Lease.Namespace, Name: d.Spec.Lease.Name}, l); err != nil {
			return false, err
		}
		return l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil &&
			time.Since(l.Spec.RenewTime.Time) < time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second, nil
	})
}
