package backup

import (
	"fmt"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"cozystack.io/platform/internal/backup/drivers"
	"cozystack.io/platform/internal/backup/jobdriver"
	"cozystack.io/platform/internal/controller/backup/binder"
	"cozystack.io/platform/internal/controller/backup/plan"
	"cozystack.io/platform/internal/controller/backup/quota"
	"cozystack.io/platform/internal/controller/backup/registration"
	"cozystack.io/platform/internal/controller/backup/restore"
	"cozystack.io/platform/internal/controller/backup/runbounds"
)

// Options configure the backup core.
type Options struct {
	// Clock of every decision; nil means the real clock.
	Clock clock.PassiveClock
	// Handoff is the handoff list; nil means the one shipped with the
	// platform (platform/internal/backup/handoff).
	Handoff []drivers.Handoff
	// BuiltIn maps the strategy kinds of the platform's own drivers to
	// their names; nil means the Job driver's (Job → job).
	BuiltIn map[string]string
	// Concurrency is the number of Plans, and of jobs, each reconciler
	// works on in parallel; 0 means each reconciler's default (4).
	Concurrency int
	// Quota is the limit of backup objects per tenant namespace (the
	// ResourceQuota cozy-backup-objects); the zero value writes none
	// (cozystack-controller's flags default to quota.Defaults).
	Quota quota.Options
}

// Setup adds the core's reconcilers to mgr. mgr's scheme must know
// backups.cozystack.io, Flux's HelmRelease and cozystack.io
// (controllermanager.Scheme does). Errors name the reconciler.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.BuiltIn == nil {
		o.BuiltIn = map[string]string{jobdriver.StrategyKind: jobdriver.DefaultName}
	}
	if err := plan.Setup(mgr, plan.Options{Clock: o.Clock, Concurrency: o.Concurrency}); err != nil {
		return fmt.Errorf("plan scheduler: %w", err)
	}
	if err := binder.Setup(mgr, binder.Options{Clock: o.Clock, Handoff: o.Handoff, BuiltIn: o.BuiltIn, Concurrency: o.Concurrency}); err != nil {
		return fmt.Errorf("binder: %w", err)
	}
	if err := registration.Setup(mgr); err != nil {
		return fmt.Errorf("driver registrations: %w", err)
	}
	if err := runbounds.Setup(mgr, runbounds.Options{Clock: o.Clock, Concurrency: o.Concurrency}); err != nil {
		return fmt.Errorf("run bounds: %w", err)
	}
	if err := restore.Setup(mgr, restore.Options{Clock: o.Clock}); err != nil {
		return fmt.Errorf("restores: %w", err)
	}
	if err := quota.Setup(mgr, o.Quota); err != nil {
		return fmt.Errorf("backup quota: %w", err)
	}
	return nil
}
