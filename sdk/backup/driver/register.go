package driver

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// registration keeps the BackupDriver object in line with Options and
// renews its Lease every third of LeaseDuration until its context ends
// (contract k7, "Binding": the core binds only to a registration whose
// Lease is live). Every replica runs it; they write the same spec as one
// field manager, and whichever renewed last holds the Lease.
type registration struct{ rt *replica }

// NeedLeaderElection: every replica heartbeats, so the registration stays
// live while any of them runs.
func (registration) NeedLeaderElection() bool { return false }

func (r registration) Start(ctx context.Context) error {
	t := time.NewTicker(renewInterval(r.rt.opts.LeaseDuration))
	defer t.Stop()
	for {
		if err := r.beat(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "register backup driver", "driver", r.rt.opts.Name)
		}
		select {
		case <-ctx.Done():
			// Stop renewing: the Lease runs out and the core stops
			// binding new jobs to this driver.
			return nil
		case <-t.C:
		}
	}
}

func (r registration) beat(ctx context.Context) error {
	o := r.rt.opts
	m := v1alpha1.DriverFieldManager(o.Name)
	d := &v1alpha1.BackupDriver{}
	d.Name = o.Name
	spec := v1alpha1.BackupDriverSpec{
		StrategyKinds: o.StrategyKinds, ProtocolVersions: o.ProtocolVersions, Capabilities: o.Capabilities,
		Catalog: o.Catalog, Version: o.Version, Lease: v1alpha1.LeaseRef{Namespace: o.Namespace, Name: LeaseName(o.Name)},
	}
	if err := apply.Object(ctx, r.rt.client, d, map[string]any{"spec": spec}, m); err != nil {
		return err
	}
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{}
	lease.Name, lease.Namespace = LeaseName(o.Name), o.Namespace
	// The core caches only Leases with this label (contract k7,
	// "Binding"), not every Lease of the cluster.
	lease.Labels = map[string]string{v1alpha1.LabelDriver: o.Name}
	return apply.Object(ctx, r.rt.client, lease, map[string]any{"spec": coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(o.Identity),
		LeaseDurationSeconds: ptr.To(int32(o.LeaseDuration / time.Second)),
		RenewTime:            &now,
	}}, m)
}

// LeaseName is the name of the Lease of the driver named driver, in its
// namespace: "backup-driver-<driver>".
func LeaseName(driver string) string { return "backup-driver-" + driver }
