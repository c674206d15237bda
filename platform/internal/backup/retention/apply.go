package retention

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// maxNamed bounds how many Backups a condition message names.
const maxNamed = 50

// Applied is the outcome of one retention pass over a Plan's Backups.
type Applied struct {
	// Condition is the Plan's Retention condition.
	Condition metav1.Condition
	// Terminating are the Plan's Backups being deleted (their driver
	// reclaims the data), including those deleted by this pass, sorted.
	Terminating []string
}

// Apply evaluates the Plan's retention (Evaluate) over its Backups at now
// in loc and, with c, deletes those it does not keep whose driver has the
// Reclaim capability. Only Backups with
// Ready=True count (kept or deleted); a Backup being deleted does not
// count, nor does one not (yet, or no longer) Ready: retention neither
// keeps a slot for it nor deletes it. The Plan's Backups are those
// labelled backups.cozystack.io/plan-uid with its UID, which the driver
// copies from the job's status.planUID, written only by the core for the
// jobs the Plan created (plan's mark): a BackupJob a tenant labelled
// backups.cozystack.io/plan=<plan>, or made to name another Plan, yields a
// Backup this pass neither counts nor deletes (contract k7, "Retention").
// An error is a failed read or delete; Condition is set whenever the
// Backups could be listed and the drivers read.
func Apply(ctx context.Context, c client.Client, plan *v1alpha1.Plan, loc *time.Location, now time.Time) (Applied, error) {
	var list v1alpha1.BackupList
	if err := c.List(ctx, &list, client.InNamespace(plan.Namespace), client.MatchingLabels{v1alpha1.LabelPlanUID: string(plan.UID)}); err != nil {
		return Applied{}, fmt.Errorf("list the Backups of Plan %s/%s: %w", plan.Namespace, plan.Name, err)
	}
	var out Applied
	byName := map[string]*v1alpha1.Backup{}
	var ready []Backup
	for i := range list.Items {
		b := &list.Items[i]
		switch {
		case b.DeletionTimestamp != nil:
			out.Terminating = append(out.Terminating, b.Name)
		case apimeta.IsStatusConditionTrue(b.Status.Conditions, v1alpha1.ConditionReady):
			byName[b.Name] = b
			ready = append(ready, Backup{Name: b.Name, TakenAt: b.Spec.TakenAt.Time})
		}
	}
	gen := plan.Generation
	if plan.Spec.Retention == nil {
		out.Condition = apply.Condition(v1alpha1.ConditionRetention, metav1.ConditionTrue, v1alpha1.ReasonRetentionApplied, gen,
			"spec.retention is not set: every Backup is kept (%d ready)", len(ready))
		return out, nil
	}
	res := Evaluate(plan.Spec.Retention, loc, now, ready)

	// Group the Backups to delete by driver; delete those whose driver
	// reclaims.
	unsupported := map[string][]string{} // driver -> Backups kept for want of Reclaim
	why := map[string]string{}           // driver -> why it cannot reclaim
	var deleted []string
	var errs []string
	drivers := map[string]*v1alpha1.BackupDriver{}
	for _, d := range res.Delete {
		b := byName[d.Name]
		name := b.Spec.DriverRef.Name
		drv, seen := drivers[name]
		if !seen {
			drv = &v1alpha1.BackupDriver{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, drv); apierrors.IsNotFound(err) {
				drv = nil
			} else if err != nil {
				return out, fmt.Errorf("get BackupDriver %s: %w", name, err)
			}
			drivers[name] = drv
		}
		switch {
		case drv == nil:
			unsupported[name] = append(unsupported[name], b.Name)
			why[name] = fmt.Sprintf("no BackupDriver %q is registered, so nothing would reclaim their data", name)
		case !drv.Has(v1alpha1.CapabilityReclaim):
			unsupported[name] = append(unsupported[name], b.Name)
			why[name] = fmt.Sprintf("BackupDriver %q lacks the Reclaim capability (spec.capabilities), so deleting them would leave their data behind", name)
		default:
			// The driver's finalizer holds the Backup until the data is
			// gone; the core adds none. The UID precondition keeps a
			// Backup recreated under the same name.
			err := c.Delete(ctx, b, client.Preconditions{UID: &b.UID})
			switch {
			case err == nil || apierrors.IsNotFound(err):
				deleted = append(deleted, b.Name)
			case apierrors.IsConflict(err):
				// Replaced meanwhile: the next pass sees the new one.
			default:
				errs = append(errs, fmt.Sprintf("%s: %v", b.Name, err))
			}
		}
	}
	out.Terminating = append(out.Terminating, deleted...)
	sort.Strings(out.Terminating)

	kept := fmt.Sprintf("retention keeps %d of %d ready Backups", len(res.Keep), len(ready))
	if len(deleted) > 0 {
		kept += fmt.Sprintf(" and deleted %d, whose driver reclaims their data: %s", len(deleted), Names(deleted))
	}
	if len(unsupported) == 0 {
		out.Condition = apply.Condition(v1alpha1.ConditionRetention, metav1.ConditionTrue, v1alpha1.ReasonRetentionApplied, gen, "%s", kept)
	} else {
		var parts []string
		for _, drv := range slices.Sorted(maps.Keys(unsupported)) {
			parts = append(parts, fmt.Sprintf("%d Backups of driver %q are due for deletion but kept, as %s: %s",
				len(unsupported[drv]), drv, why[drv], Names(unsupported[drv])))
		}
		out.Condition = apply.Condition(v1alpha1.ConditionRetention, metav1.ConditionFalse, v1alpha1.ReasonReclaimUnsupported, gen,
			"%s. %s. Delete them by hand once their data is removed, or back up with a class whose driver has the Reclaim capability.",
			kept, strings.Join(parts, ". "))
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("delete Backups due for deletion: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// Names lists up to maxNamed names, then how many more: how a condition
// message names Backups.
func Names(list []string) string {
	if len(list) <= maxNamed {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:maxNamed], ", ") + fmt.Sprintf(" and %d more", len(list)-maxNamed)
}
