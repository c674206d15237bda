package binder

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/backup/drivers"
	"cozystack.io/platform/internal/backup/handoff"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// Name is the controller's name (logs, metrics).
const Name = "backup-binder"

// DefaultResync is the default Options.Resync.
const DefaultResync = time.Minute

// indexClass indexes BackupJobs by spec.backupClassName, so a class's
// change reaches only its jobs.
const indexClass = "binder.backups.cozystack.io/spec.backupClassName"

// Options configure the binder.
type Options struct {
	// Clock gives the time of every decision (Lease liveness, the wait
	// bound, boundTime); nil means the real clock.
	Clock clock.PassiveClock
	// Handoff is the handoff list; nil means the list shipped with the
	// platform (handoff.Shipped), an empty non-nil slice means none.
	Handoff []drivers.Handoff
	// Resync is the longest time a waiting job goes without being
	// evaluated again (besides the watches); default DefaultResync.
	Resync time.Duration
	// Concurrency is the number of jobs bound in parallel (default 4).
	Concurrency int
	// BuiltIn maps the strategy kinds of the platform's own drivers to
	// their names (drivers.Resolver.BuiltIn).
	BuiltIn map[string]string
}

// Setup registers the binder with mgr, whose scheme must know
// backups.cozystack.io/v1alpha1, helm.toolkit.fluxcd.io/v2 HelmReleases and
// coordination.k8s.io/v1 Leases, and whose cache holds them. It watches
// BackupJobs, BackupDrivers, the Leases they name, BackupClasses and
// application HelmReleases, and Backups (to add each to the owners of
// its snapshot: owners.go); it reads and writes snapshot ConfigMaps
// without caching them. Errors: an invalid shipped handoff list, a
// field index or a controller that cannot be built.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Handoff == nil {
		list, err := handoff.Shipped()
		if err != nil {
			return err
		}
		o.Handoff = list
	}
	if o.Resync <= 0 {
		o.Resync = DefaultResync
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	ctx := context.Background()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &backupsv1alpha1.BackupJob{}, indexClass, func(obj client.Object) []string {
		return []string{obj.(*backupsv1alpha1.BackupJob).Spec.BackupClassName}
	}); err != nil {
		return fmt.Errorf("index BackupJobs by class: %w", err)
	}
	c := mgr.GetClient()
	r := &reconciler{
		client:   c,
		live:     mgr.GetAPIReader(),
		clock:    o.Clock,
		resolver: &drivers.Resolver{Reader: c, Handoff: o.Handoff, BuiltIn: o.BuiltIn},
		recorder: mgr.GetEventRecorder(Name),
		resync:   o.Resync,
	}

	// Only jobs the binder has work on: unbound and waiting, or bound and
	// not yet labelled with their driver.
	jobs := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		j, ok := obj.(*backupsv1alpha1.BackupJob)
		return ok && (waiting(j) || unlabelled(j))
	})
	noDelete := predicate.Funcs{DeleteFunc: func(event.DeleteEvent) bool { return false }}

	// Any change of a registration may bind any waiting job.
	toWaiting := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		return r.waitingJobs(ctx, nil, nil)
	})
	// A Lease matters when a registration names it.
	leaseToWaiting := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		var list backupsv1alpha1.BackupDriverList
		if err := c.List(ctx, &list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing BackupDrivers")
			return nil
		}
		for _, d := range list.Items {
			if d.Spec.Lease.Namespace == obj.GetNamespace() && d.Spec.Lease.Name == obj.GetName() {
				return r.waitingJobs(ctx, nil, nil)
			}
		}
		return nil
	})
	// A renewal of a live Lease changes nothing; a Lease coming, going,
	// or becoming live or expired does.
	liveness := predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			now := r.clock.Now()
			return drivers.Live(e.ObjectOld.(*coordinationv1.Lease), now) != drivers.Live(e.ObjectNew.(*coordinationv1.Lease), now)
		},
	}
	classToJobs := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		return r.waitingJobs(ctx, []client.ListOption{client.MatchingFields{indexClass: obj.GetName()}}, nil)
	})
	// An application appearing may end ApplicationNotFound.
	appToJobs := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		l := obj.GetLabels()
		return r.waitingJobs(ctx, []client.ListOption{client.InNamespace(obj.GetNamespace())}, func(j *backupsv1alpha1.BackupJob) bool {
			a := j.Spec.ApplicationRef
			return l[v1alpha1.LabelApplicationGroup] == a.APIGroup && l[v1alpha1.LabelApplicationKind] == a.Kind && l[v1alpha1.LabelApplicationName] == a.Name
		})
	})
	application := predicate.And(
		predicate.NewPredicateFuncs(func(obj client.Object) bool {
			_, ok := obj.GetLabels()[v1alpha1.LabelApplicationName]
			return ok
		}),
		predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				return predicate.LabelChangedPredicate{}.Update(e)
			},
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		},
	)

	if err := setupOwners(mgr); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named(Name).
		For(&backupsv1alpha1.BackupJob{}, builder.WithPredicates(jobs, noDelete)).
		Watches(&backupsv1alpha1.BackupDriver{}, toWaiting).
		Watches(&coordinationv1.Lease{}, leaseToWaiting, builder.WithPredicates(liveness)).
		Watches(&backupsv1alpha1.BackupClass{}, classToJobs).
		Watches(&helmv2.HelmRelease{}, appToJobs, builder.WithPredicates(application)).
		WithOptions(controller.Options{MaxConcurrentReconciles: o.Concurrency}).
		Complete(r)
}

// waitingJobs returns a request for every BackupJob (narrowed by opts and,
// when not nil, match) waiting to be bound, from the cache.
func (r *reconciler) waitingJobs(ctx context.Context, opts []client.ListOption, match func(*backupsv1alpha1.BackupJob) bool) []reconcile.Request {
	var list backupsv1alpha1.BackupJobList
	if err := r.client.List(ctx, &list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing BackupJobs")
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if j := &list.Items[i]; waiting(j) && (match == nil || match(j)) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// waiting reports whether j is the binder's to bind: unbound, not
// terminal, not cancelled, not being deleted.
func waiting(j *backupsv1alpha1.BackupJob) bool {
	return j.Status.Binding == nil && !j.Status.Phase.Terminal() && !j.Spec.Cancel && j.DeletionTimestamp == nil
}

// unlabelled reports whether j is bound but does not carry its driver's
// label (the label patch after binding failed, or someone changed it).
func unlabelled(j *backupsv1alpha1.BackupJob) bool {
	return j.Status.Binding != nil && j.DeletionTimestamp == nil &&
		j.Labels[backupsv1alpha1.LabelDriver] != j.Status.Binding.DriverRef.Name
}
