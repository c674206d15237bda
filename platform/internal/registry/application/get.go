package application

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Get returns application name from the request namespace. options
// (resourceVersion) go to the HelmRelease read unchanged. Stored fields
// the kind's schema no longer declares are shown, each with a Warning
// header (warnStoredKeys).
func (r *REST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	hr, err := r.getHelmRelease(ctx, name, options)
	if err != nil {
		return nil, err
	}
	app, err := r.fromHelmRelease(hr)
	if err != nil {
		return nil, err
	}
	warnStoredKeys(ctx, r.kind, app)
	return app, nil
}
