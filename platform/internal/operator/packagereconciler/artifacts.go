package packagereconciler

import (
	"context"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/status"
)

// awaitArtifacts returns the result to report while the PackageSource of
// plan pl has not published (or not yet made Ready) the chart of one of
// its enabled components, or nil when every chart is there. A source
// publishes a component's ExternalArtifact only once a Package enables it
// (packagesourcereconciler, demand.go), so a newly enabled component
// waits for it, with reason ChartNotPublished and nothing written, rather
// than creating a HelmRelease that fails on a missing source; the
// ExternalArtifact's appearance reconciles the Package again
// (SetupWithManager).
func (r *Reconciler) awaitArtifacts(ctx context.Context, pl *plan) (*status.Result, error) {
	var missing []string
	for _, c := range pl.components {
		name := v1alpha1.ComponentArtifactName(pl.source.Name, c.Name)
		var ea sourcev1.ExternalArtifact
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: v1alpha1.SystemNamespace, Name: name}, &ea)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, err
		case ea.Status.Artifact != nil && apimeta.IsStatusConditionTrue(ea.Status.Conditions, meta.ReadyCondition):
			continue
		}
		missing = append(missing, fmt.Sprintf("%s (ExternalArtifact %s/%s)", c.Name, v1alpha1.SystemNamespace, name))
	}
	if len(missing) == 0 {
		return nil, nil
	}
	return &status.Result{State: status.StateProgressing, Reason: v1alpha1.ReasonChartNotPublished,
		Message: fmt.Sprintf("waiting for PackageSource %s to publish the charts of components %s: a source publishes a component's chart once a Package enables it; nothing was changed meanwhile; if this lasts, see the source's Ready condition",
			pl.source.Name, strings.Join(missing, ", "))}, nil
}

// deref returns *r, or the zero Result for nil.
func deref(r *status.Result) status.Result {
	if r == nil {
		return status.Result{}
	}
	return *r
}
