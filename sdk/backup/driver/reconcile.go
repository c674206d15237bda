package driver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-logr/logr"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// jobOps is what differs between BackupJobs and RestoreJobs; the claim,
// cancel and status flow (jobReconciler) is shared.
type jobOps interface {
	kind() string
	operation() Operation
	newObject() client.Object
	status(obj client.Object) *v1alpha1.JobStatus
	backupName(obj client.Object) string
	cancelRequested(obj client.Object) bool
	reconcile(ctx context.Context, obj client.Object, run Run) (Outcome, error)
	cancel(ctx context.Context, obj client.Object, run Run) error
	// succeed finishes a run whose backend is done; it returns the name of
	// the Backup created (BackupJobs only).
	succeed(ctx context.Context, obj client.Object, run Run, out Outcome) (string, error)
}

// jobReconciler runs the jobs of one kind bound to this driver (contract
// k7, "Runs"): it claims them, calls the Driver, and writes the driver's
// status intent.
type jobReconciler struct {
	rt  *replica
	ops jobOps
}

// jobPass is what one Reconcile of a job works on: the job, its status (in
// the object, so a status write updates it), the intent read from the
// status (before) and the one to write (in), and the time and generation
// the pass started at.
type jobPass struct {
	job    types.NamespacedName
	obj    client.Object
	st     *v1alpha1.JobStatus
	before *intent
	in     *intent
	now    time.Time
	gen    int64
}

// Reconcile runs one pass over a job bound to this driver, as its steps:
// deletion (deleted), cleanup of a run the core ended (cleanUpEndedRun),
// the claim (claim), the finalizer, cancellation (cancelRun), one call of
// the Driver (runDriver), and the status it leads to (record).
func (r *jobReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o := r.rt.opts
	obj := r.ops.newObject()
	if err := r.rt.cache.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	p := &jobPass{job: req.NamespacedName, obj: obj, st: r.ops.status(obj)}
	// The label put the job in this cache; only the binding makes it ours.
	// A job without binding or bound to another driver is never touched.
	if p.st.Binding == nil || p.st.Binding.DriverRef.Name != o.Name {
		return ctrl.Result{}, nil
	}
	deleting := obj.GetDeletionTimestamp() != nil
	switch {
	case deleting && hasFinalizer(obj):
		// Deleted: the run's backend objects go with the job, or stay with
		// the Backup it produced (contract k7, "Deletion").
		return r.deleted(ctx, obj, p.st)
	case endedByCore(p.st) && !deleting:
		return r.cleanUpEndedRun(ctx, p)
	case p.st.Phase.Terminal() || deleting:
		return ctrl.Result{}, nil
	}
	p.now = time.Now()
	action, wait := decideClaim(p.st.Claim, o.Identity, p.now)
	if action == claimWait {
		return ctrl.Result{RequeueAfter: wait + jitter(o.ClaimDuration)}, nil
	}
	if err := r.claim(ctx, p, action); err != nil {
		return r.writeFailed(ctx, err)
	}
	if !hasFinalizer(obj) {
		// A run claimed by a driver before it added the finalizer.
		if err := setFinalizer(ctx, r.rt.client, obj, true); err != nil {
			return r.writeFailed(ctx, err)
		}
		return ctrl.Result{RequeueAfter: 10 * time.Millisecond}, nil
	}
	run := r.newRun(obj, p.st, p.in.Claim.Takeovers)
	if r.ops.cancelRequested(obj) {
		return r.cancelRun(ctx, p, run)
	}
	out, backup, err := r.runDriver(ctx, p, run)
	return r.record(ctx, p, out, backup, err)
}

// cleanUpEndedRun handles a run the core ended while this driver was
// working on it (its run timeout): cleanup is the driver's (contract k7,
// "Runs"), so it removes what the run created, then releases the claim,
// which marks the cleanup done.
func (r *jobReconciler) cleanUpEndedRun(ctx context.Context, p *jobPass) (ctrl.Result, error) {
	run := r.newRun(p.obj, p.st, p.st.Claim.Takeovers)
	if err := r.ops.cancel(ctx, p.obj, run); err != nil {
		r.logger(ctx).Error(err, "cleanup of a run the core ended failed; retrying", "job", p.job)
		return ctrl.Result{RequeueAfter: time.Second + jitter(time.Second)}, nil
	}
	in := intentOf(p.st, r.ops.backupName(p.obj))
	in.Claim = nil
	if err := r.write(ctx, p.obj, in); err != nil {
		return r.writeFailed(ctx, err)
	}
	r.logger(ctx).Info("removed what a run the core ended had created", "job", p.job)
	return ctrl.Result{}, nil
}

// claim sets p.before and p.in from the job's status, with the claim
// action leads to. Acquiring or taking over a run also sets its start time
// and Running, and writes the finalizer and then the claim before any
// backend work; a renewal is written with the run's next status (keep). An
// error is of one of those writes.
func (r *jobReconciler) claim(ctx context.Context, p *jobPass, action claimAction) error {
	o := r.rt.opts
	p.before = intentOf(p.st, r.ops.backupName(p.obj))
	p.in = intentOf(p.st, r.ops.backupName(p.obj))
	p.in.Claim, _ = nextClaim(p.st.Claim, action, o.Identity, o.ClaimDuration, p.now)
	p.gen = p.obj.GetGeneration()
	if action != claimAcquire && action != claimTakeover {
		return nil
	}
	if p.in.StartTime == nil {
		t := metav1.NewTime(p.now)
		p.in.StartTime = &t
	}
	p.in.running(r.heldBy(), p.gen)
	// The finalizer first: from the claim on, the run may create backend
	// objects, and a deletion of the job must find it (contract k7,
	// "Deletion"). The patch is guarded by the job's resourceVersion, and
	// the claim below by the new one.
	if err := setFinalizer(ctx, r.rt.client, p.obj, true); err != nil {
		return err
	}
	// The claim is written before any backend work, so two replicas never
	// both work: the loser's write fails its precondition.
	if err := r.write(ctx, p.obj, p.in); err != nil {
		return err
	}
	if action == claimTakeover {
		r.logger(ctx).Info("took over a run whose holder was lost", "job", p.job, "takeovers", p.in.Claim.Takeovers)
	}
	p.before = p.in.deepCopy()
	return nil
}

// cancelRun ends a run whose job asks to be cancelled (spec.cancel) once
// the Driver has removed what the run created; a failed cancel is retried.
func (r *jobReconciler) cancelRun(ctx context.Context, p *jobPass, run Run) (ctrl.Result, error) {
	if err := r.ops.cancel(ctx, p.obj, run); err != nil {
		r.logger(ctx).Error(err, "cancel failed; retrying", "job", p.job)
		return r.keep(ctx, p.obj, p.before, p.in, Outcome{})
	}
	p.in.end(v1alpha1.PhaseCancelled, metav1.ConditionFalse, v1alpha1.ReasonCancelled,
		"cancelled (spec.cancel); the driver removed what the run created", metav1.NewTime(p.now), p.gen)
	return r.finish(ctx, p.obj, p.in)
}

// runDriver calls the Driver for one step of the run: it validates the
// binding's parameters, reconciles the run, and, when the backend is
// done, finishes it (succeed), which names the Backup created (BackupJobs
// only).
func (r *jobReconciler) runDriver(ctx context.Context, p *jobPass, run Run) (out Outcome, backup string, err error) {
	if err = r.rt.drv.ValidateParameters(ctx, r.ops.operation(), p.st.Binding.Strategy); err != nil {
		return out, "", err
	}
	if out, err = r.ops.reconcile(ctx, p.obj, run); err != nil || !out.Done {
		return out, "", err
	}
	backup, err = r.ops.succeed(ctx, p.obj, run, out)
	return out, backup, err
}

// record writes what runDriver led to: Succeeded (naming the Backup), or
// Failed for a terminal error (Terminal), or, for a transient error or a
// run still going, Running with the Driver's progress, kept until the
// next pass (keep).
func (r *jobReconciler) record(ctx context.Context, p *jobPass, out Outcome, backup string, err error) (ctrl.Result, error) {
	in := p.in
	switch {
	case err != nil:
		if reason, msg, ok := terminal(err); ok {
			in.end(v1alpha1.PhaseFailed, metav1.ConditionFalse, reason, msg, metav1.NewTime(p.now), p.gen)
			return r.finish(ctx, p.obj, in)
		}
		r.logger(ctx).Error(err, "run failed transiently; retrying", "job", p.job)
		return r.keep(ctx, p.obj, p.before, in, Outcome{})
	case out.Done:
		in.BackupName = backup
		msg := "succeeded"
		if backup != "" {
			msg = "succeeded; Backup " + backup
		}
		in.end(v1alpha1.PhaseSucceeded, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, msg, metav1.NewTime(p.now), p.gen)
		return r.finish(ctx, p.obj, in)
	}
	in.running(r.heldBy(), p.gen)
	if pr := out.Progress; pr != nil {
		msg := cut(pr.Message, 1024)
		if in.Progress == nil || in.Progress.Message != msg || !equalPercent(in.Progress.Percent, pr.Percent) {
			in.Progress = &v1alpha1.Progress{Time: metav1.NewTime(p.now), Percent: pr.Percent, Message: msg}
		}
	}
	return r.keep(ctx, p.obj, p.before, in, out)
}

// logger is the context's logger with the driver and the replica.
func (r *jobReconciler) logger(ctx context.Context) logr.Logger {
	return log.FromContext(ctx).WithValues("driver", r.rt.opts.Name, "identity", r.rt.opts.Identity)
}

// keep writes in when it differs from before (a renewal due, a new
// progress report, a condition) and asks to be called again before the
// claim's next renewal is due.
func (r *jobReconciler) keep(ctx context.Context, obj client.Object, before, in *intent, out Outcome) (ctrl.Result, error) {
	if !apiequality.Semantic.DeepEqual(before, in) {
		if err := r.write(ctx, obj, in); err != nil {
			return r.writeFailed(ctx, err)
		}
	}
	o := r.rt.opts
	after := o.PollInterval
	if out.RequeueAfter > 0 {
		after = out.RequeueAfter
	}
	if next := time.Until(in.Claim.RenewTime.Add(renewInterval(o.ClaimDuration))); next < after {
		after = next
	}
	if after < 10*time.Millisecond {
		after = 10 * time.Millisecond
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// finish writes a terminal intent.
func (r *jobReconciler) finish(ctx context.Context, obj client.Object, in *intent) (ctrl.Result, error) {
	if err := r.write(ctx, obj, in); err != nil {
		return r.writeFailed(ctx, err)
	}
	return ctrl.Result{}, nil
}

func (r *jobReconciler) write(ctx context.Context, obj client.Object, in *intent) error {
	return applyJobStatus(ctx, r.rt.client, obj, in, v1alpha1.DriverFieldManager(r.rt.opts.Name))
}

// writeFailed turns a failed status write into a retry: a 409 means this
// replica's view was stale (another replica or the core wrote meanwhile),
// a 422 most often that the core ended the job (terminal phases are
// sticky); both are settled by reading again.
func (r *jobReconciler) writeFailed(ctx context.Context, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) || apierrors.IsInvalid(err) || apierrors.IsNotFound(err) {
		log.FromContext(ctx).V(1).Info("status write refused; reading again", "error", err.Error())
		return ctrl.Result{RequeueAfter: 50*time.Millisecond + jitter(time.Second)}, nil
	}
	return ctrl.Result{}, err
}

// newRun is the Run of job obj with status st.
func (r *jobReconciler) newRun(obj client.Object, st *v1alpha1.JobStatus, takeovers int32) Run {
	o := r.rt.opts
	return Run{Driver: o.Name, Identity: o.Identity, Namespace: o.Namespace, Strategy: st.Binding.Strategy,
		Takeovers: takeovers, Client: r.rt.client, obj: obj, kind: r.ops.kind(), rt: r.rt}
}

func (r *jobReconciler) heldBy() string {
	return fmt.Sprintf("running; claimed by %s of driver %s", r.rt.opts.Identity, r.rt.opts.Name)
}

func (in *intent) deepCopy() *intent {
	out := *in
	out.Claim = in.Claim.DeepCopy()
	out.Progress = in.Progress.DeepCopy()
	out.StartTime = in.StartTime.DeepCopy()
	out.CompletionTime = in.CompletionTime.DeepCopy()
	out.Conditions = append([]metav1.Condition(nil), in.Conditions...)
	return &out
}

func equalPercent(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// jitter spreads retries of replicas over a tenth of d.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(d)/10 + 1))
}

// endedByCore reports whether the core failed a run a driver had claimed
// (reason DeadlineExceeded) and the claim is still there: the driver has
// not cleaned up after it yet.
func endedByCore(st *v1alpha1.JobStatus) bool {
	if st.Phase != v1alpha1.PhaseFailed || st.Claim == nil {
		return false
	}
	c := apimeta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
	return c != nil && c.Reason == v1alpha1.ReasonDeadlineExceeded
}
