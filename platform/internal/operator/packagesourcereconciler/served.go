package packagesourcereconciler

import (
	"context"
	"fmt"

	"github.com/opencontainers/go-digest"
	ctrl "sigs.k8s.io/controller-runtime"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/contracts/artifact"
)

// Step 1: the served revision, from the operator's store (package store),
// so that a restart or a failing registry never takes a served chart away.

// servedRevision returns the revision ps's status.artifact names, loaded
// from the store, or nil when ps serves none. lost is set when one is
// named and cannot be loaded: it names the digest and the store.
func (r *Reconciler) servedRevision(ctx context.Context, ps *v1alpha1.PackageSource) (served *artifact.Artifact, lost error) {
	if ps.Status.Artifact == nil {
		return nil, nil
	}
	d, err := digest.Parse(ps.Status.Artifact.Digest)
	if err == nil {
		served, err = r.Store.Load(ctx, d)
	}
	if err != nil {
		lost = fmt.Errorf("the served revision %s is no longer in the operator's store (--storage-dir): %w", ps.Status.Artifact.Digest, err)
		ctrl.LoggerFrom(ctx).Error(lost, "cannot republish the served revision")
	}
	return served, lost
}
