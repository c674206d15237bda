package velerodriver

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// MaxTTL is Velero's spec.ttl when nothing bounds how long our retention
// keeps a Backup: ten years. Velero has no "never" (a zero TTL is its
// default, 720h), so this ceiling stands for it.
const MaxTTL = 10 * 365 * 24 * time.Hour

// TTLGrace is added to a retention's bound: Velero's garbage collection
// (hourly) then never runs ahead of the core's retention, which deletes
// the Backup (and, through Reclaim, the Velero backup) itself.
const TTLGrace = time.Hour

// TTLDecision is Velero's spec.ttl for one backup and why.
type TTLDecision struct {
	// TTL is spec.ttl.
	TTL time.Duration
	// Bounded: the Plan's retention deletes every Backup older than
	// TTL-TTLGrace, so TTL follows it exactly.
	Bounded bool
	// Mismatch is set when Velero's TTL and the retention disagree (the
	// retention keeps Backups for no bounded time while the parameters
	// set a ttl, or the parameters' ttl was overridden); it says so.
	Mismatch string
	// Reason says where TTL comes from, for the job's progress message.
	Reason string
}

// retentionBound returns the age after which r deletes every Backup, or
// false when r keeps some Backup for no bounded time. Contract k7
// ("Retention", platform retention rules in sdk/backup/api/v1alpha1
// Retention): count rules (keepLast, keepDaily, keepWeekly, keepMonthly)
// count periods that have a Backup, so with a Plan suspended they keep
// Backups of any age; minKeep (default 1) keeps the newest whatever their
// age. Only maxAge with minKeep 0 and no count rule bounds the age.
func retentionBound(r *v1alpha1.Retention) (time.Duration, string, bool) {
	if r == nil {
		return 0, "the Plan has no retention (every Backup is kept)", false
	}
	var keeps []string
	for _, k := range []struct {
		name string
		n    *int32
	}{{"keepLast", r.KeepLast}, {"keepDaily", r.KeepDaily}, {"keepWeekly", r.KeepWeekly}, {"keepMonthly", r.KeepMonthly}} {
		if k.n != nil && *k.n > 0 {
			keeps = append(keeps, fmt.Sprintf("%s %d", k.name, *k.n))
		}
	}
	minKeep := int32(1)
	if r.MinKeep != nil {
		minKeep = *r.MinKeep
	}
	if minKeep > 0 {
		keeps = append(keeps, fmt.Sprintf("minKeep %d", minKeep))
	}
	if len(keeps) > 0 {
		return 0, "the Plan's retention keeps Backups of any age (" + strings.Join(keeps, ", ") + ")", false
	}
	if r.MaxAge == nil {
		return 0, "the Plan's retention has no rule (every Backup is kept)", false
	}
	return r.MaxAge.Duration, fmt.Sprintf("the Plan's retention maxAge %s", r.MaxAge.Duration), true
}

// decideTTL decides Velero's TTL for a backup of job (ttl.go): from the
// retention of its Plan (label backups.cozystack.io/plan) when it bounds
// the Backups' age (maxAge + TTLGrace); else from the parameters' ttl
// (reporting the mismatch: Velero may delete what the retention keeps,
// and the Backup then shows ArtifactMissing), else MaxTTL (which never
// undercuts the retention; it never outlives it either, since the core
// deletes an expired Backup through Reclaim, which deletes the Velero
// backup). A Plan that cannot be read is an error (transient); a Plan
// that does not exist is treated as no retention.
func decideTTL(ctx context.Context, c client.Client, job *v1alpha1.BackupJob, p *Parameters) (TTLDecision, error) {
	plan := job.Labels[v1alpha1.LabelPlan]
	var bound time.Duration
	var why string
	bounded := false
	if plan == "" {
		why = "the BackupJob comes from no Plan (its Backup is kept until deleted)"
	} else {
		pl := &v1alpha1.Plan{}
		err := c.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: plan}, pl)
		switch {
		case apierrors.IsNotFound(err):
			why = fmt.Sprintf("Plan %s does not exist (its Backups are kept until deleted)", plan)
		case err != nil:
			return TTLDecision{}, fmt.Errorf("read Plan %s/%s for its retention: %w", job.Namespace, plan, err)
		default:
			bound, why, bounded = retentionBound(pl.Spec.Retention)
			why = strings.Replace(why, "the Plan", "Plan "+plan, 1)
		}
	}
	if bounded {
		d := TTLDecision{TTL: bound + TTLGrace, Bounded: true,
			Reason: fmt.Sprintf("Velero TTL %s from %s plus %s", bound+TTLGrace, why, TTLGrace)}
		if p.TTL != nil && p.TTL.Duration != d.TTL {
			d.Mismatch = fmt.Sprintf("parameters ttl %s ignored: %s governs", p.TTL.Duration, why)
		}
		return d, nil
	}
	if p.TTL != nil {
		return TTLDecision{TTL: p.TTL.Duration, Reason: fmt.Sprintf("Velero TTL %s from the parameters' ttl", p.TTL.Duration),
			Mismatch: fmt.Sprintf("%s, but Velero deletes this backup after %s: the Backup then shows ArtifactMissing", why, p.TTL.Duration)}, nil
	}
	return TTLDecision{TTL: MaxTTL, Reason: fmt.Sprintf("Velero TTL %s (the ceiling): %s, and the core deletes it through Reclaim", MaxTTL, why)}, nil
}

// message is the TTL part of a progress message.
func (d TTLDecision) message() string {
	if d.Mismatch != "" {
		return d.Reason + "; TTL mismatch: " + d.Mismatch
	}
	return d.Reason
}
