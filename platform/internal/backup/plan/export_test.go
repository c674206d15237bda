package plan

import (
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// NewReconciler is the Plan reconciler over c (writes and the cached
// reads) and reader (the Plan), without a manager or recorder, for tests
// that call Reconcile themselves.
func NewReconciler(c client.Client, reader client.Reader, clk clock.PassiveClock) reconcile.Reconciler {
	return &reconciler{client: c, reader: reader, clock: clk}
}
