package clustervalues_test

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/controller"
)

// TestLeaderElection: of two replicas only the Lease holder reconciles;
// when it stops, the other takes over and projects.
func TestLeaderElection(t *testing.T) {
	need(t)
	const id = "cozystack-controller-test.cozystack.io"
	elect := func(o *controller.Options) {
		o.LeaderElect = true
		o.LeaderElectionID = id
		o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 2*time.Second, time.Second, 200*time.Millisecond
	}
	a := startController(t, elect)
	waitElected(t, a, "the first replica")
	b := startController(t, elect)
	ctx := testContext(t)
	createClusterValues(t, spec())
	first := createNamespace(t, "elect", true, nil)
	cv := getClusterValues(t)
	eventually(t, 30*time.Second, "projected by the leader", func() error { return projected(ctx, cv, first) })
	select {
	case <-b.mgr.Elected():
		t.Fatal("the second replica was elected while the first holds the Lease")
	case <-time.After(3 * time.Second): // longer than the lease duration
	}

	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "cozy-system", Name: id}, lease); err != nil {
		t.Fatalf("the Lease: %v", err)
	}
	holder := ""
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	if holder == "" {
		t.Fatal("the Lease has no holder")
	}

	a.stop(t) // releases the Lease
	waitElected(t, b, "the second replica after the first stopped")
	second := createNamespace(t, "elect", true, nil)
	eventually(t, 30*time.Second, "projected by the new leader", func() error { return projected(ctx, cv, second) })
	if err := c.Get(ctx, client.ObjectKey{Namespace: "cozy-system", Name: id}, lease); err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == holder {
		t.Errorf("the Lease is still held by %q", holder)
	}
}

func waitElected(t *testing.T, ctl *instance, who string) {
	t.Helper()
	select {
	case <-ctl.mgr.Elected():
	case <-time.After(30 * time.Second):
		t.Fatalf("%s was not elected within 30s", who)
	}
}
