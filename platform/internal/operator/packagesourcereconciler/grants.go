package packagesourcereconciler

import (
	"context"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"cozystack.io/platform/internal/operator/adinstaller"
)

// gone cleans up after PackageSource source, which no longer exists: it
// stops serving its charts, forgets its revisions and, once none of its
// ApplicationDefinitions is left, deletes the ClusterRoles it granted
// (adinstaller.RemoveGrants). Its ExternalArtifacts go with it (owner
// references); Packages keep what they installed and report SourceMissing.
// A definition's deletion reconciles its source again (SetupWithManager),
// so the last one to go takes the grants with it.
func (r *Reconciler) gone(ctx context.Context, source string) error {
	r.Server.Withdraw(source)
	r.forget(source)
	left, deleted, err := adinstaller.RemoveGrants(ctx, r.Client, source)
	log := ctrl.LoggerFrom(ctx)
	switch {
	case err != nil:
		return err
	case len(left) > 0:
		log.Info("PackageSource deleted; its grants stay while its ApplicationDefinitions do", "definitions", strings.Join(left, ", "))
	case len(deleted) > 0:
		log.Info("PackageSource and its ApplicationDefinitions deleted; its ClusterRoles removed", "clusterRoles", strings.Join(deleted, ", "))
	}
	return r.Store.Forget(ctx, source)
}
