package velerodriver_test

import (
	"context"
	"fmt"
	"testing"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/virtualization/backup/velerodriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/conformance"
	"cozystack.io/sdk/backup/driver"
)

// TestConformance runs the SDK's driver conformance suite
// (sdk/backup/conformance) against the Velero driver. No Velero runs: the
// suite's Complete writes what Velero would (a Backup's or Restore's
// status Completed; a DeleteBackupRequest processed, its Backup deleted).
func TestConformance(t *testing.T) {
	need(t)
	conformance.Run(t, conformance.Setup{
		Config: env.Config, Scheme: velerodriver.Scheme(),
		Driver: velerodriver.DefaultName, StrategyKind: velerodriver.StrategyKind, Namespace: driverNamespace,
		Start: func(ctx context.Context, r conformance.Replica) error {
			o := options(r.Identity, r.ClaimDuration)
			r.Apply(&o.Driver)
			return velerodriver.Start(ctx, env.Config, o)
		},
		// The suite's application is a Postgres "db": a kind the driver
		// has no release prefix for, so the parameters give it.
		Parameters:        params(t, map[string]any{"storageLocation": "default", "releasePrefix": "postgres-"}),
		UnknownParameters: params(t, map[string]any{"storageLocation": "default", "releasePrefix": "postgres-", "includeClusterResources": true}),
		UnknownKey:        "includeClusterResources",
		Backend:           backend,
		Complete:          complete,
		Squat: func(job *v1alpha1.BackupJob) client.Object {
			vb := &velerov1.Backup{}
			vb.Name, vb.Namespace = driver.ObjectName(job.Namespace+"."+job.Name, "backup"), veleroNamespace
			return vb
		},
		CheckRestore: func(_ context.Context, _ client.Client, rj *v1alpha1.RestoreJob, objs []client.Object) error {
			if len(objs) != 1 {
				return fmt.Errorf("%d backend objects, want 1 Velero Restore", len(objs))
			}
			vr, ok := objs[0].(*velerov1.Restore)
			if !ok {
				return fmt.Errorf("backend object %T, want a Velero Restore", objs[0])
			}
			if len(vr.Spec.IncludedResources) == 0 || vr.Spec.ExistingResourcePolicy != velerov1.PolicyTypeNone {
				return fmt.Errorf("restore into a new application: resources %v, policy %q; want the disks only, policy none", vr.Spec.IncludedResources, vr.Spec.ExistingResourcePolicy)
			}
			return nil
		},
	})
}

// backend lists the Velero objects of a run.
func backend(ctx context.Context, c client.Client, run types.UID) ([]client.Object, error) {
	sel := client.MatchingLabels{v1alpha1.LabelRun: string(run)}
	var out []client.Object
	var bl velerov1.BackupList
	if err := c.List(ctx, &bl, sel); err != nil {
		return nil, err
	}
	for i := range bl.Items {
		out = append(out, &bl.Items[i])
	}
	var rl velerov1.RestoreList
	if err := c.List(ctx, &rl, sel); err != nil {
		return nil, err
	}
	for i := range rl.Items {
		out = append(out, &rl.Items[i])
	}
	var dl velerov1.DeleteBackupRequestList
	if err := c.List(ctx, &dl, sel); err != nil {
		return nil, err
	}
	for i := range dl.Items {
		out = append(out, &dl.Items[i])
	}
	return out, nil
}

// complete finishes obj as Velero would: a Backup or Restore Completed; a
// DeleteBackupRequest processed, which deletes its Backup (Velero's
// backup deletion controller; no Velero runs here).
func complete(ctx context.Context, c client.Client, obj client.Object) error {
	now := metav1.Now()
	switch o := obj.(type) {
	case *velerov1.Backup:
		if o.Status.Phase == velerov1.BackupPhaseCompleted {
			return nil
		}
		o.Status = completed(12)
		return c.Update(ctx, o)
	case *velerov1.Restore:
		if o.Status.Phase == velerov1.RestorePhaseCompleted {
			return nil
		}
		o.Status = velerov1.RestoreStatus{Phase: velerov1.RestorePhaseCompleted, StartTimestamp: &now, CompletionTimestamp: &now,
			Progress: &velerov1.RestoreProgress{TotalItems: 3, ItemsRestored: 3}}
		return c.Update(ctx, o)
	case *velerov1.DeleteBackupRequest:
		if o.Status.Phase == velerov1.DeleteBackupRequestPhaseProcessed {
			return nil
		}
		vb := &velerov1.Backup{}
		vb.Name, vb.Namespace = o.Spec.BackupName, o.Namespace
		if err := client.IgnoreNotFound(c.Delete(ctx, vb)); err != nil {
			return err
		}
		o.Status.Phase = velerov1.DeleteBackupRequestPhaseProcessed
		return c.Update(ctx, o)
	}
	return fmt.Errorf("unexpected backend object %T", obj)
}
