package restore

import (
	"context"
	"fmt"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"cozystack.io/platform/internal/backup/drivers"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

// reconciler binds RestoreJobs; see the package doc for the flow.
type reconciler struct {
	// client reads RestoreJobs from the cache and writes them.
	client client.Client
	// client also sends the SubjectAccessReviews of access.go.
	// reader reads everything else: the cache, Leases and Namespaces from
	// the API.
	reader    client.Reader
	apps      dynamic.Interface
	drivers   *drivers.Resolver
	clock     clock.PassiveClock
	retry     time.Duration
	protocols []string
}

// Reconcile takes one RestoreJob one step: a bound job only gets its
// driver label back if it lost it (the binding stands: authorization is
// not checked again and the job never rebinds), a terminal one is left
// alone, any other is decided again from scratch and its whole status
// intent applied as backupsv1alpha1.CoreFieldManager. Waiting jobs are
// retried every retry interval besides the watches. Errors are the API's
// (retried with backoff).
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	job := &backupsv1alpha1.RestoreJob{}
	if err := r.client.Get(ctx, req.NamespacedName, job); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if job.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	if p := job.Status.Phase; p == backupsv1alpha1.PhaseFailed || p == backupsv1alpha1.PhaseCancelled {
		// A failed restore removes the application the core created for
		// it (contract k7, "Restores").
		removed, err := removeTarget(ctx, r.reader, r.apps, job)
		if err != nil {
			return reconcile.Result{}, err
		}
		if removed {
			ctrl.LoggerFrom(ctx).Info("deleted the application created for a failed restore",
				"restoreJob", req.NamespacedName, "application", job.Status.TargetRef.Name, "uid", job.Status.TargetUID)
		}
	}
	if b := job.Status.Binding; b != nil {
		return reconcile.Result{}, r.labelDriver(ctx, job, b.DriverRef.Name)
	}
	if job.Status.Phase.Terminal() {
		return reconcile.Result{}, nil
	}
	now := r.clock.Now()
	in, err := r.decide(ctx, job, now)
	if err != nil {
		return reconcile.Result{}, err
	}
	st := summarize(job, in, now)
	if in.binding == nil && apiequality.Semantic.DeepEqual(st, job.Status) {
		// Nothing new: no request (a waiting job is decided every retry
		// interval).
		return r.after(in), nil
	}
	if in.binding != nil {
		// Labelled first: when the binding appears, the driver's cache,
		// narrowed by the label, already holds the job.
		if err := r.labelDriver(ctx, job, in.binding.DriverRef.Name); err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := apply.Status(ctx, r.client, job, st, backupsv1alpha1.CoreFieldManager); err != nil {
		return reconcile.Result{}, fmt.Errorf("apply the status of RestoreJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	return r.after(in), nil
}

// after is when to decide a job again: after the retry interval while it
// waits, never once it is bound or ended.
func (r *reconciler) after(in intent) reconcile.Result {
	if in.binding == nil && in.failure == nil {
		return reconcile.Result{RequeueAfter: r.retry}
	}
	return reconcile.Result{}
}

// decide is the core's whole intent for an unbound, live job at now:
// end a job cancelled before binding; refuse InPlace across namespaces;
// authorize; find (not yet create) the target and, when it is to be
// created, check that the namespace's tenant admins may create it; check
// the Backup's driver; create the target; bind. Each wait
// for the target or the driver is bounded by the driver wait timeout of
// the Backup's class (the default when it is gone).
func (r *reconciler) decide(ctx context.Context, job *backupsv1alpha1.RestoreJob, now time.Time) (intent, error) {
	var in intent
	if job.Spec.Cancel {
		// No driver holds an unbound job: the core ends it.
		in.cancelled = true
		in.failure = &verdict{status: metav1.ConditionFalse, reason: backupsv1alpha1.ReasonCancelled,
			message: "cancelled (spec.cancel) before a driver was bound: nothing was restored"}
		return in, nil
	}
	ns := backupNamespace(job)
	if job.Spec.Target.Mode == backupsv1alpha1.RestoreInPlace && ns != job.Namespace {
		in.failure = &verdict{reason: backupsv1alpha1.ReasonInPlaceAcrossNamespaces, status: metav1.ConditionFalse, message: fmt.Sprintf(
			"target.mode InPlace restores into the Backup's own application, in namespace %s, and a RestoreJob writes only into its own namespace %s: create a RestoreJob with target.mode NewApplication and a target.applicationName instead",
			ns, job.Namespace)}
		return in, nil
	}
	b, auth, err := authorize(ctx, r.reader, job)
	if err != nil {
		return in, err
	}
	in.authorized = &auth
	if b == nil {
		in.blocked = &auth
		return in, nil
	}
	class, timeouts, err := classOf(ctx, r.reader, b)
	if err != nil {
		return in, err
	}
	limit := backupsv1alpha1.Or(timeouts.DriverWait, time.Hour)
	since := waitingSince(job, now)
	stop := func(o outcome) intent {
		o = waitTimedOut(o, since, now, limit)
		switch {
		case o.wait != nil:
			in.bound, in.blocked = o.wait, o.wait
		case o.fail != nil:
			in.failure = o.fail
			if o.fail.reason == backupsv1alpha1.ReasonDriverWaitTimeout {
				in.bound = o.fail
			}
		}
		return in
	}

	t, o, err := resolveTarget(ctx, r.reader, r.apps, job, b)
	if err != nil {
		return in, err
	}
	if !o.done() {
		return stop(o), nil
	}
	if t.create != nil {
		// Checked on every decision until the target exists, so a
		// forbidden kind fails at once rather than after the driver wait.
		o, err := mayCreate(ctx, r.client, r.reader, job, b, t)
		if err != nil {
			return in, err
		}
		if !o.done() {
			return stop(o), nil
		}
	}
	in.targetRef = &t.ref
	d, live, err := r.drivers.Get(ctx, b.Spec.DriverRef.Name, now)
	if err != nil {
		return in, err
	}
	version, o := checkDriver(b, job.Spec.Target.Mode, d, live, r.protocols)
	if !o.done() {
		return stop(o), nil
	}
	if t.create != nil {
		o, err := createTarget(ctx, r.apps, job, t)
		if err != nil {
			return in, err
		}
		if !o.done() {
			return stop(o), nil
		}
	}
	in.targetUID = t.uid
	in.binding = newBinding(b, version, class, timeouts, now)
	in.bound = &verdict{status: metav1.ConditionTrue, reason: backupsv1alpha1.ReasonBound, message: fmt.Sprintf(
		"bound to BackupDriver %s (protocol %s), which took Backup %s/%s; it restores into %s %s",
		d.Name, version, b.Namespace, b.Name, t.ref.Kind, t.ref.Name)}
	return in, nil
}

// labelDriver sets backupsv1alpha1.LabelDriver on job to driver, unless it
// is already.
func (r *reconciler) labelDriver(ctx context.Context, job *backupsv1alpha1.RestoreJob, driver string) error {
	if job.Labels[backupsv1alpha1.LabelDriver] == driver {
		return nil
	}
	patch := client.MergeFrom(job.DeepCopy())
	if job.Labels == nil {
		job.Labels = map[string]string{}
	}
	job.Labels[backupsv1alpha1.LabelDriver] = driver
	if err := r.client.Patch(ctx, job, patch); err != nil {
		return fmt.Errorf("label RestoreJob %s/%s with its driver: %w", job.Namespace, job.Name, err)
	}
	return nil
}
