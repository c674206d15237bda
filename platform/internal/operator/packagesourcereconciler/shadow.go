package packagesourcereconciler

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"

	"cozystack.io/platform/internal/operator/adinstaller"
)

// checkShadowing refuses, with a *adinstaller.ConflictError, definitions
// whose names shadow a resource the cluster serves (adinstaller.Shadowing
// over the discovery of r.Discovery, CRDs included). A group whose
// discovery fails (an aggregated API that is down) is skipped: its names
// are checked the next time. Without r.Discovery only the pull's static
// list applies (artifact.CheckNames).
func (r *Reconciler) checkShadowing(ctx context.Context, objs []*unstructured.Unstructured) error {
	if r.Discovery == nil {
		return nil
	}
	_, lists, err := r.Discovery.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return fmt.Errorf("discover the served resources: %w", err)
	}
	return adinstaller.Shadowing(objs, adinstaller.ServedNames(lists))
}
