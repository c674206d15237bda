package velerodriver

import (
	"context"
	"fmt"
	"time"

	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// Conditions the Verifier writes on a Backup, beside the SDK's Ready.
const (
	// ConditionArtifactMissing is True when the Backup's Velero backup is
	// gone (deleted by hand, by Velero's TTL, or being deleted): the
	// Backup cannot be restored.
	ConditionArtifactMissing = "ArtifactMissing"
	// ConditionDegraded is True when Velero ended the backup
	// PartiallyFailed; the message has the item counts.
	ConditionDegraded = "Degraded"

	// ReasonVeleroBackupNotFound: the Velero Backup does not exist.
	ReasonVeleroBackupNotFound = "VeleroBackupNotFound"
	// ReasonVeleroBackupDeleting: Velero is deleting it.
	ReasonVeleroBackupDeleting = "VeleroBackupDeleting"
	// ReasonVeleroBackupPresent: it exists.
	ReasonVeleroBackupPresent = "VeleroBackupPresent"
	// ReasonPartiallyFailed: Velero's phase PartiallyFailed.
	ReasonPartiallyFailed = "PartiallyFailed"
)

// Verifier implements the capability Verify: every interval (and soon
// after Kick) it reads the Velero backup of each Backup of the driver and
// writes the Backup's conditions ArtifactMissing and Degraded (server-side
// apply as the driver's field manager, resending the SDK's Ready). It runs
// on every replica (the writes are idempotent) and needs no leader.
type Verifier struct {
	client   client.Client
	driver   string
	interval time.Duration
	kick     chan struct{}
}

// NeedLeaderElection: every replica verifies.
func (*Verifier) NeedLeaderElection() bool { return false }

// Kick asks for a pass soon (a Backup was just made).
func (v *Verifier) Kick() {
	select {
	case v.kick <- struct{}{}:
	default:
	}
}

// Start verifies until ctx ends; it returns nil then.
func (v *Verifier) Start(ctx context.Context) error {
	t := time.NewTicker(v.interval)
	defer t.Stop()
	for {
		if err := v.Pass(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "verify Velero backups", "driver", v.driver)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-v.kick:
			// The SDK creates the Backup right after the run's last
			// call: give it a moment.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
		}
	}
}

// Pass verifies every Backup of the driver once; the first error is
// returned after all were tried.
func (v *Verifier) Pass(ctx context.Context) error {
	var list v1alpha1.BackupList
	if err := v.client.List(ctx, &list, client.MatchingLabels{v1alpha1.LabelDriver: v.driver}); err != nil {
		return err
	}
	var first error
	for i := range list.Items {
		if err := v.verify(ctx, &list.Items[i]); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// verify writes the conditions of one Backup when they changed.
func (v *Verifier) verify(ctx context.Context, b *v1alpha1.Backup) error {
	if b.DeletionTimestamp != nil || b.Spec.DriverRef.Name != v.driver {
		return nil
	}
	dd, err := driverDataOf(b)
	if err != nil {
		return nil
	}
	want := verdict(b, dd, v.lookup(ctx, dd))
	if want == nil {
		return nil
	}
	changed := false
	for _, c := range want {
		old := apimeta.FindStatusCondition(b.Status.Conditions, c.Type)
		if old == nil || old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message {
			changed = true
		}
	}
	if !changed {
		return nil
	}
	// Ready is this driver's too (it took the backup): it is resent as it is.
	conds := append(apply.Owned(b.Status.Conditions, v1alpha1.ConditionReady), apply.Conditions(b.Status.Conditions, time.Now(), want...)...)
	if conds == nil {
		conds = []metav1.Condition{}
	}
	st := struct {
		Conditions []metav1.Condition `json:"conditions"`
	}{conds}
	return apply.Status(ctx, v.client, b, st, v1alpha1.DriverFieldManager(v.driver))
}

// lookup is the Velero backup's state: nil and found=false when gone; an
// error other than NotFound keeps the conditions as they are.
type lookupResult struct {
	vb    *velerov1.Backup
	found bool
	err   error
}

func (v *Verifier) lookup(ctx context.Context, dd DriverData) lookupResult {
	vb := &velerov1.Backup{}
	err := v.client.Get(ctx, types.NamespacedName{Namespace: dd.Namespace, Name: dd.Backup}, vb)
	if apierrors.IsNotFound(err) {
		return lookupResult{}
	}
	if err != nil {
		return lookupResult{err: err}
	}
	return lookupResult{vb: vb, found: true}
}

// verdict is the pure part of verify: the conditions a Backup should carry
// for what was found (nil: leave them).
func verdict(b *v1alpha1.Backup, dd DriverData, l lookupResult) []metav1.Condition {
	if l.err != nil {
		return nil
	}
	name := fmt.Sprintf("Velero Backup %s/%s", dd.Namespace, dd.Backup)
	missing := metav1.Condition{Type: ConditionArtifactMissing, ObservedGeneration: b.Generation}
	switch {
	case !l.found:
		missing.Status, missing.Reason = metav1.ConditionTrue, ReasonVeleroBackupNotFound
		missing.Message = name + " does not exist (deleted, or expired by Velero's TTL): this Backup cannot be restored; delete it"
	case l.vb.DeletionTimestamp != nil || l.vb.Status.Phase == velerov1.BackupPhaseDeleting:
		missing.Status, missing.Reason = metav1.ConditionTrue, ReasonVeleroBackupDeleting
		missing.Message = name + " is being deleted: this Backup cannot be restored"
	default:
		missing.Status, missing.Reason = metav1.ConditionFalse, ReasonVeleroBackupPresent
		missing.Message = name + " exists"
	}
	out := []metav1.Condition{missing}
	if dd.Degraded != "" {
		out = append(out, apply.Condition(ConditionDegraded, metav1.ConditionTrue, ReasonPartiallyFailed, b.Generation, "%s", dd.Degraded))
	}
	return out
}
