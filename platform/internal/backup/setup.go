package backup

import (
	"fmt"
	"os"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"cozystack.io/platform/internal/backup/binder"
	"cozystack.io/platform/internal/backup/drivers"
	"cozystack.io/platform/internal/backup/handoff"
	"cozystack.io/platform/internal/backup/jobdriver"
	"cozystack.io/platform/internal/backup/plan"
	"cozystack.io/platform/internal/backup/quota"
	"cozystack.io/platform/internal/backup/registration"
	"cozystack.io/platform/internal/backup/restore"
	"cozystack.io/platform/internal/backup/runbounds"
	"cozystack.io/platform/internal/version"
)

// Options configure what of backups a manager runs: the core, the Job
// driver, or both (cozystack-controller's --controllers backup-core and
// backup-job-driver).
type Options struct {
	// RunCore sets up the core's reconcilers: the Plan scheduler, the
	// binder, the driver registrations, the run bounds, the restores and
	// the quota.
	RunCore bool
	// RunJobDriver sets up the built-in Job driver (JobDriver).
	RunJobDriver bool

	// Clock of every decision of the core; nil means the real clock.
	Clock clock.PassiveClock
	// Handoff is the handoff list; nil means HandoffFile's, or else the
	// one shipped with the platform (platform/internal/backup/handoff).
	Handoff []drivers.Handoff
	// HandoffFile, when set and Handoff is nil, is a handoff list (YAML,
	// the format of platform/internal/backup/handoff/handoff.yaml) used
	// instead of the shipped one: how a test or an operator tries the
	// list of a coming release.
	HandoffFile string
	// BuiltIn maps the strategy kinds of the platform's own drivers to
	// their names; nil means the Job driver's (Job → job).
	BuiltIn map[string]string
	// Concurrency is the number of Plans, and of jobs, each reconciler of
	// the core works on in parallel; 0 means each reconciler's default
	// (4).
	Concurrency int
	// Quota is the limit of backup objects per tenant namespace (the
	// ResourceQuota cozy-backup-objects); the zero value writes none
	// (Defaults uses quota.Defaults).
	Quota quota.Options

	// JobDriver configures the Job driver; its Namespace is required with
	// RunJobDriver, its Version defaults to the platform's
	// (platform/internal/version).
	JobDriver jobdriver.Options
}

// Defaults returns cozystack-controller's defaults: both parts, 16 Plans
// and jobs in parallel, the default quota.
func Defaults() Options {
	return Options{RunCore: true, RunJobDriver: true, Concurrency: 16, Quota: quota.Defaults()}
}

// Setup adds to mgr the parts of o: the core's reconcilers (RunCore),
// then the Job driver (RunJobDriver). mgr's scheme must know
// backups.cozystack.io, Flux's HelmRelease and cozystack.io
// (controllermanager.Scheme does). Errors name the part and the
// reconciler, or the handoff file.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.RunCore {
		if err := setupCore(mgr, o); err != nil {
			return fmt.Errorf("the backup core: %w", err)
		}
	}
	if o.RunJobDriver {
		jd := o.JobDriver
		if jd.Version == "" {
			jd.Version = version.Get()
		}
		if err := jobdriver.Setup(mgr, jd); err != nil {
			return fmt.Errorf("the Job backup driver: %w", err)
		}
	}
	return nil
}

// setupCore adds the core's reconcilers to mgr.
func setupCore(mgr ctrl.Manager, o Options) error {
	if o.Handoff == nil && o.HandoffFile != "" {
		data, err := os.ReadFile(o.HandoffFile)
		if err != nil {
			return err
		}
		if o.Handoff, err = handoff.Parse(data); err != nil {
			return fmt.Errorf("handoff list %s: %w", o.HandoffFile, err)
		}
	}
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
