package health

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// AddChecks registers /healthz "ping" (the process answers) and /readyz
// "informers": ready only once the manager's informers have synced, since
// before that a reconciler would act on, and a status report on, an empty
// cache. Each readiness probe waits at most one second.
func AddChecks(mgr manager.Manager) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("informers", func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return fmt.Errorf("informers not synced")
		}
		return nil
	})
}
