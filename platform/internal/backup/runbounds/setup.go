package runbounds

import (
	"fmt"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// Name prefixes the controllers' names (logs, metrics):
// backup-runbounds-backupjob and backup-runbounds-restorejob.
const Name = "backup-runbounds"

// Options configure the run bounds.
type Options struct {
	// Clock gives the time of every decision; nil means the real clock.
	Clock clock.PassiveClock
	// Resync, when positive, caps the time until a job is evaluated again;
	// zero means only at its next deadline and on its changes.
	Resync time.Duration
	// Concurrency is the number of jobs of each kind evaluated in
	// parallel (default 4).
	Concurrency int
}

// job is a BackupJob or a RestoreJob.
type job interface {
	client.Object
}

// kind is one job kind the bounds apply to.
type kind struct {
	name   string
	newObj func() job
	status func(job) *backupsv1alpha1.JobStatus
}

var kinds = []kind{
	{
		name:   "backupjob",
		newObj: func() job { return &backupsv1alpha1.BackupJob{} },
		status: func(j job) *backupsv1alpha1.JobStatus { return &j.(*backupsv1alpha1.BackupJob).Status.JobStatus },
	},
	{
		name:   "restorejob",
		newObj: func() job { return &backupsv1alpha1.RestoreJob{} },
		status: func(j job) *backupsv1alpha1.JobStatus { return &j.(*backupsv1alpha1.RestoreJob).Status.JobStatus },
	},
}

// Setup registers one controller per job kind (BackupJob, RestoreJob) with
// mgr, whose scheme must know backups.cozystack.io/v1alpha1. Errors are
// controller-runtime's.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	for _, k := range kinds {
		r := &reconciler{
			kind:     k,
			client:   mgr.GetClient(),
			live:     mgr.GetAPIReader(),
			clock:    o.Clock,
			resync:   o.Resync,
			recorder: mgr.GetEventRecorder(Name),
		}
		inScope := predicate.NewPredicateFuncs(func(obj client.Object) bool {
			j, ok := obj.(job)
			return ok && r.bounded(j)
		})
		noDelete := predicate.Funcs{DeleteFunc: func(event.DeleteEvent) bool { return false }}
		err := ctrl.NewControllerManagedBy(mgr).Named(Name+"-"+k.name).
			For(k.newObj(), builder.WithPredicates(inScope, noDelete)).
			WithOptions(controller.Options{MaxConcurrentReconciles: o.Concurrency}).
			Complete(r)
		if err != nil {
			return fmt.Errorf("set up %s-%s: %w", Name, k.name, err)
		}
	}
	return nil
}
