package driver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func (r *jobReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o := r.rt.opts
	obj := r.ops.newObject()
	if err := r.rt.cache.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	st := r.ops.status(obj)
	// The label put the job in this cache; only the binding makes it ours.
	// A job without binding or bound to another driver is never touched.
	if st.Binding == nil || st.Binding.DriverRef.Name != o.Name {
		return ctrl.Result{}, nil
	}
	logger := log.FromContext(ctx).WithValues("driver", o.Name, "identity", o.Identity)
	if obj.GetDeletionTimestamp() != nil && hasFinalizer(obj) {
		// Deleted: the run's backend objects go with the job, or stay with
		// the Backup it produced (contract k7, "Deletion").
		return r.deleted(ctx, obj, st)
	}
	if endedByCore(st) && obj.GetDeletionTimestamp() == nil {
		// The core ended a run this driver was working on (its run
		// timeout): cleanup is the driver's (contract k7, "Runs"), so
		// remove what the run created, then release the claim, which
		// marks the cleanup done.
		run := r.newRun(obj, st, st.Claim.Takeovers)
		if err := r.ops.cancel(ctx, obj, run); err != nil {
			logger.Error(err, "cleanup of a run the core ended failed; retrying", "job", req.NamespacedName)
			return ctrl.Result{RequeueAfter: time.Second + jitter(time.Second)}, nil
		}
		in := intentOf(st, r.ops.backupName(obj))
		in.Claim = nil
		if err := r.write(ctx, obj, in); err != nil {
			return r.writeFailed(ctx, err)
		}
		logger.Info("removed what a run the core ended had created", "job", req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if st.Phase.Terminal() || obj.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	now := time.Now()
	action, wait := decideClaim(st.Claim, o.Identity, now)
	if action == claimWait {
		return ctrl.Result{RequeueAfter: wait + jitter(o.ClaimDuration)}, nil
	}
	before := intentOf(st, r.ops.backupName(obj))
	in := intentOf(st, r.ops.backupName(obj))
	in.Claim, _ = nextClaim(st.Claim, action, o.Identity, o.ClaimDuration, now)
	gen := obj.GetGeneration()
	if action == claimAcquire || action == claimTakeover {
		if in.StartTime == nil {
			t := metav1.NewTime(now)
			in.StartTime = &t
		}
		in.running(r.heldBy(), gen)
		// The finalizer first: from the claim on, the run may create
		// backend objects, and a deletion of the job must find it
		// (contract k7, "Deletion"). The patch is guarded by the job's
		// resourceVersion, and the claim below by the new one.
		if err := setFinalizer(ctx, r.rt.client, obj, true); err != nil {
			return r.writeFailed(ctx, err)
		}
		// The claim is written before any backend work, so two replicas
		// never both work: the loser's write fails its precondition.
		if err := r.write(ctx, obj, in); err != nil {
			return r.writeFailed(ctx, err)
		}
		if action == claimTakeover {
			logger.Info("took over a run whose holder was lost", "job", req.NamespacedName, "takeovers", in.Claim.Takeovers)
		}
		before = in.deepCopy()
	}
	if !hasFinalizer(obj) {
		// A run claimed by a driver before it added the finalizer.
		if err := setFinalizer(ctx, r.rt.client, obj, true); err != nil {
			return r.writeFailed(ctx, err)
		}
		return ctrl.Result{RequeueAfter: 10 * time.Millisecond}, nil
	}
	run := r.newRun(obj, st, in.Claim.Takeovers)

	if r.ops.cancelRequested(obj) {
		if err := r.ops.cancel(ctx, obj, run); err != nil {
			logger.Error(err, "cancel failed; retrying", "job", req.NamespacedName)
			return r.keep(ctx, obj, before, in, Outcome{})
		}
		in.end(v1alpha1.PhaseCancelled, metav1.ConditionFalse, v1alpha1.ReasonCancelled,
			"cancelled (spec.cancel); the driver removed what the run created", metav1.NewTime(now), gen)
		return r.finish(ctx, obj, in)
	}

	err := r.rt.drv.ValidateParameters(ctx, r.ops.operation(), st.Binding.Strategy)
	var out Outcome
	if err == nil {
		out, err = r.ops.reconcile(ctx, obj, run)
	}
	if err == nil && out.Done {
		var name string
		if name, err = r.ops.succeed(ctx, obj, run, out); err == nil {
			in.BackupName = name
			msg := "succeeded"
			if name != "" {
				msg = "succeeded; Backup " + name
			}
			in.end(v1alpha1.PhaseSucceeded, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, msg, metav1.NewTime(now), gen)
			return r.finish(ctx, obj, in)
		}
	}
	if err != nil {
		if reason, msg, ok := terminal(err); ok {
			in.end(v1alpha1.PhaseFailed, metav1.ConditionFalse, reason, msg, metav1.NewTime(now), gen)
			return r.finish(ctx, obj, in)
		}
		logger.Error(err, "run failed transiently; retrying", "job", req.NamespacedName)
		return r.keep(ctx, obj, before, in, Outcome{})
	}
	in.running(r.heldBy(), gen)
	if p := out.Progress; p != nil {
		msg := cut(p.Message, 1024)
		if in.Progress == nil || in.Progress.Message != msg || !equalPercent(in.Progress.Percent, p.Percent) {
			in.Progress = &v1alpha1.Progress{Time: metav1.NewTime(now), Percent: p.Percent, Message: msg}
		}
	}
	return r.keep(ctx, obj, before, in, out)
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
