package driver

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// claimAction is what a replica does about a run's claim.
type claimAction int

const (
	// claimAcquire: no claim yet; take it.
	claimAcquire claimAction = iota
	// claimHeld: this replica holds it.
	claimHeld
	// claimWait: another replica holds a fresh claim; wait until it could
	// go stale.
	claimWait
	// claimTakeover: another replica's claim is stale (its holder is
	// lost); take it over, counting a takeover.
	claimTakeover
)

// decideClaim decides, at now, what replica me does about claim c, and for
// claimWait how long until c goes stale. A claim is stale when now is at or
// past renewTime + leaseDurationSeconds (contract k7, "Runs").
func decideClaim(c *v1alpha1.Claim, me string, now time.Time) (claimAction, time.Duration) {
	switch {
	case c == nil || c.HolderIdentity == "":
		return claimAcquire, 0
	case c.HolderIdentity == me:
		return claimHeld, 0
	}
	expiry := c.RenewTime.Add(time.Duration(c.LeaseDurationSeconds) * time.Second)
	if now.Before(expiry) {
		return claimWait, expiry.Sub(now)
	}
	return claimTakeover, 0
}

// nextClaim returns the claim to write for action at now, and whether it
// differs from old enough to need a write: acquiring and taking over always
// do; a held claim is renewed once a third of its lease has passed.
func nextClaim(old *v1alpha1.Claim, action claimAction, me string, lease time.Duration, now time.Time) (*v1alpha1.Claim, bool) {
	secs := int32(lease / time.Second)
	t := metav1.NewMicroTime(now)
	switch action {
	case claimAcquire:
		return &v1alpha1.Claim{HolderIdentity: me, AcquireTime: t, RenewTime: t, LeaseDurationSeconds: secs}, true
	case claimTakeover:
		return &v1alpha1.Claim{HolderIdentity: me, AcquireTime: t, RenewTime: t, LeaseDurationSeconds: secs,
			Takeovers: old.Takeovers + 1}, true
	case claimHeld:
		c := old.DeepCopy()
		if now.Sub(old.RenewTime.Time) >= renewInterval(time.Duration(old.LeaseDurationSeconds)*time.Second) {
			c.RenewTime = t
			return c, true
		}
		return c, false
	}
	return old.DeepCopy(), false
}

// renewInterval is a third of the lease (contract k7, "Runs").
func renewInterval(lease time.Duration) time.Duration { return lease / 3 }
