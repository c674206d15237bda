package restore

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/backup/drivers"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// DefaultRetryInterval is how often a waiting RestoreJob is decided again
// besides the watches (a driver's Lease renewal is not watched).
const DefaultRetryInterval = 10 * time.Second

// Options configure the reconciler. The zero value is ready to use.
type Options struct {
	// Clock tells the time of bindings, condition transitions, Lease
	// liveness and the driver wait; nil means the real clock.
	Clock clock.PassiveClock
	// Apps is the client of the application API (apps.cozystack.io,
	// served by cozystack-api through kube-apiserver) that reads targets
	// and creates new applications, as the core's own identity; nil means
	// one built from the manager's rest.Config. That identity needs get
	// and create on every application resource in tenant namespaces.
	Apps dynamic.Interface
	// RetryInterval is how often a waiting job is decided again;
	// 0 means DefaultRetryInterval.
	RetryInterval time.Duration
}

// Field indexes of RestoreJobs in the manager's cache.
const (
	// indexBackup: "<namespace>/<name>" of the job's Backup.
	indexBackup = "restore.backupRef"
	// indexBackupNamespace: the namespace of the job's Backup.
	indexBackupNamespace = "restore.backupRef.namespace"
	// indexWaiting: "true" on jobs neither bound nor terminal.
	indexWaiting = "restore.waiting"
)

// Setup registers the RestoreJob reconciler with mgr, whose scheme must
// know backups.cozystack.io/v1alpha1, cozystack.io/v1alpha1 and core
// kinds, and whose cache may hold every RestoreJob, Backup, BackupGrant,
// BackupJob, Plan, BackupClass, BackupDriver and ApplicationDefinition
// (Leases are read from the API server). It watches RestoreJobs; Backups
// and BackupGrants (a new grant or Backup moves the jobs waiting for it at
// once); BackupDrivers and ApplicationDefinitions (for waiting jobs).
// Besides, it reads Leases and Namespaces from the API server and sends
// SubjectAccessReviews (create on authorization.k8s.io
// subjectaccessreviews), with the manager's identity.
// Errors are controller-runtime's, or the client's when Apps is nil and
// cannot be built.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = DefaultRetryInterval
	}
	if o.Apps == nil {
		apps, err := dynamic.NewForConfig(mgr.GetConfig())
		if err != nil {
			return fmt.Errorf("restore: client of the application API: %w", err)
		}
		o.Apps = apps
	}
	reader := liveReader{cache: mgr.GetClient(), api: mgr.GetAPIReader()}
	r := &reconciler{
		client:    mgr.GetClient(),
		reader:    reader,
		apps:      o.Apps,
		drivers:   &drivers.Resolver{Reader: reader},
		clock:     o.Clock,
		retry:     o.RetryInterval,
		protocols: drivers.CoreProtocolVersions,
	}
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	job := func(f func(*backupsv1alpha1.RestoreJob) []string) client.IndexerFunc {
		return func(o client.Object) []string { return f(o.(*backupsv1alpha1.RestoreJob)) }
	}
	if err := idx.IndexField(ctx, &backupsv1alpha1.RestoreJob{}, indexBackup, job(func(j *backupsv1alpha1.RestoreJob) []string {
		return []string{backupNamespace(j) + "/" + j.Spec.BackupRef.Name}
	})); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &backupsv1alpha1.RestoreJob{}, indexBackupNamespace, job(func(j *backupsv1alpha1.RestoreJob) []string {
		return []string{backupNamespace(j)}
	})); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &backupsv1alpha1.RestoreJob{}, indexWaiting, job(func(j *backupsv1alpha1.RestoreJob) []string {
		if j.Status.Binding == nil && !j.Status.Phase.Terminal() {
			return []string{"true"}
		}
		return nil
	})); err != nil {
		return err
	}

	jobs := func(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
		var list backupsv1alpha1.RestoreJobList
		if err := mgr.GetClient().List(ctx, &list, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing RestoreJobs")
			return nil
		}
		out := make([]reconcile.Request, len(list.Items))
		for i := range list.Items {
			out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
		}
		return out
	}
	// A Backup: the jobs naming it.
	byBackup := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		return jobs(ctx, client.MatchingFields{indexBackup: o.GetNamespace() + "/" + o.GetName()})
	})
	// A grant (created, changed or deleted): the jobs of the namespaces it
	// names that read Backups of its namespace.
	byGrant := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		g, ok := o.(*backupsv1alpha1.BackupGrant)
		if !ok {
			return nil
		}
		var out []reconcile.Request
		for _, f := range g.Spec.From {
			out = append(out, jobs(ctx, client.InNamespace(f.Namespace), client.MatchingFields{indexBackupNamespace: g.Namespace})...)
		}
		return out
	})
	// A driver or a kind came or changed: every waiting job.
	waitingJobs := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		return jobs(ctx, client.MatchingFields{indexWaiting: "true"})
	})
	return ctrl.NewControllerManagedBy(mgr).Named("backup-restore").
		For(&backupsv1alpha1.RestoreJob{}).
		Watches(&backupsv1alpha1.Backup{}, byBackup).
		Watches(&backupsv1alpha1.BackupGrant{}, byGrant).
		Watches(&backupsv1alpha1.BackupDriver{}, waitingJobs).
		Watches(&v1alpha1.ApplicationDefinition{}, waitingJobs).
		Complete(r)
}
