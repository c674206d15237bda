package packagesourcereconciler

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/patch"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
	"cozystack.io/platform/internal/status"
)

// Step 5: the status (package status), and when to look again.

// outcome is what steps 1 to 4 leave for the status.
type outcome struct {
	// fresh is the revision fetched by this reconcile, served from now on
	// (nil: none); served is the revision served, fresh or not (nil: none).
	fresh, served *artifact.Artifact
	// lost says why the served revision could not be loaded (servedRevision).
	lost error
	// fits says whether served's declarations fit in the status
	// (checkStatusSize).
	fits bool
	// result is the verdict to report.
	result status.Result
}

// summarize writes the status of ps from o (the served artifact, the
// catalog metadata and Ready/Reconciling/Stalled, the one status.Writer
// call of this reconciler) and returns when to look again: at
// spec.interval when Ready (never for a digest, which does not move), after
// the backoff of the failures in a row otherwise.
func (r *Reconciler) summarize(ctx context.Context, patcher *patch.SerialPatcher, ps *v1alpha1.PackageSource, tries *attempts, o outcome) (ctrl.Result, error) {
	result := o.result
	// A fetch that succeeded cleared lost, so lost only ever adds to a
	// failure: the served revision cannot be republished either.
	if o.lost != nil {
		result.Message += "; " + o.lost.Error()
	}
	if o.fresh != nil {
		ps.Status.Artifact = artifactStatus(o.fresh, r.display(ps), metav1.Now())
	}
	if o.served != nil {
		info := o.served.Catalog.CatalogInfo
		ps.Status.Catalog = &info
		ps.Status.Libraries, ps.Status.Variants, ps.Status.Applications = nil, nil, nil
		if o.fits {
			ps.Status.Libraries = o.served.Catalog.Libraries
			ps.Status.Variants = o.served.Catalog.Variants
			ps.Status.Applications = o.served.Catalog.Applications
		}
	}
	interval := intervalOf(ps)
	var retry time.Duration
	if result.State == status.StateReady {
		tries.failures = 0
	} else {
		tries.failures++
		retry = backoff(tries.failures, interval)
		result.Message += fmt.Sprintf("; attempt %d failed, the next in %s", tries.failures, retry)
	}
	// A Normal event when the source becomes Ready (a new revision), a
	// Warning when it fails, each only on change.
	if err := (status.Writer{Recorder: r.Recorder, Action: "Pull", FieldOwner: v1alpha1.FieldManagerOperator}).Write(ctx, patcher, ps, result); err != nil {
		return ctrl.Result{}, err
	}

	switch {
	case result.State == status.StateReady && ps.Spec.OCI != nil && ps.Spec.OCI.Digest != "":
		return ctrl.Result{}, nil // a digest never moves
	case result.State == status.StateReady:
		return ctrl.Result{RequeueAfter: interval}, nil
	default:
		return ctrl.Result{RequeueAfter: retry}, nil
	}
}

// intervalOf is how often ps's tag is resolved again: spec.interval, or
// DefaultInterval when unset.
func intervalOf(ps *v1alpha1.PackageSource) time.Duration {
	if ps.Spec.Interval != nil && ps.Spec.Interval.Duration > 0 {
		return ps.Spec.Interval.Duration
	}
	return DefaultInterval
}

// backoff is the wait after the n-th failure in a row: firstRetry, doubled
// for each failure after the first, at most interval.
func backoff(n int, interval time.Duration) time.Duration {
	d := firstRetry
	for i := 1; i < n && d < interval; i++ {
		d *= 2
	}
	return min(d, interval)
}

func (r *Reconciler) display(ps *v1alpha1.PackageSource) string {
	switch {
	case ps.Spec.OCI != nil && ps.Spec.OCI.Digest != "":
		return ps.Spec.OCI.Repository + "@" + ps.Spec.OCI.Digest
	case ps.Spec.OCI != nil:
		return ps.Spec.OCI.Repository + ":" + ps.Spec.OCI.Tag
	case ps.Spec.Layout != nil:
		return ps.Spec.Layout.Path + ":" + ps.Spec.Layout.Tag
	}
	return ""
}

func artifactStatus(a *artifact.Artifact, reference string, now metav1.Time) *v1alpha1.ArtifactStatus {
	s := &v1alpha1.ArtifactStatus{Reference: reference, Digest: a.Manifest.Digest.String(), Revision: a.Revision(), LastUpdateTime: now}
	for _, c := range a.Charts {
		s.Charts = append(s.Charts, v1alpha1.ChartArtifact{
			Path: c.Path, Name: c.Name, Version: c.Version, Digest: c.Descriptor.Digest.String(), Size: c.Descriptor.Size,
		})
	}
	return s
}
