package runbounds_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/runbounds"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/testenv"
)

// Neither the binder nor a driver runs in these tests: they write what
// each would, by server-side apply under its field manager: the binder's
// binding (v1alpha1.CoreFieldManager) and a driver's claim, progress and
// phase (v1alpha1.DriverFieldManager("x")).

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(backuptest.Main(m, &env)) }

// c is an admin client knowing every kind used here.
var c client.Client

// driver is the field manager of the test's driver.
var driver = backupsv1alpha1.DriverFieldManager("x")

// need skips under -short, installs the CRDs once and makes the client c.
func need(t *testing.T) {
	t.Helper()
	c = backuptest.Client(t, env, "")
}

// startBounds runs the run bounds on clk in a manager of their own until
// the end of the test.
func startBounds(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	backuptest.StartManager(t, env.Config, func(mgr ctrl.Manager) error {
		return runbounds.Setup(mgr, runbounds.Options{Clock: clk, Resync: 200 * time.Millisecond})
	})
}

// job is a BackupJob or RestoreJob of the tests.
type job interface {
	client.Object
	GetConditions() []metav1.Condition
}

// newJob creates a BackupJob or RestoreJob named name in ns, deleted at
// the end of the test.
func newJob(t *testing.T, kind, ns, name string) job {
	t.Helper()
	var j job
	switch kind {
	case "BackupJob":
		j = &backupsv1alpha1.BackupJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: backupsv1alpha1.BackupJobSpec{
				ApplicationRef: backupsv1alpha1.ApplicationRef{
					ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"}, Name: "db",
				},
				BackupClassName: "default",
			},
		}
	case "RestoreJob":
		j = &backupsv1alpha1.RestoreJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: backupsv1alpha1.RestoreJobSpec{
				BackupRef: backupsv1alpha1.BackupRef{Name: "db-1"},
				Target:    backupsv1alpha1.RestoreTarget{Mode: backupsv1alpha1.RestoreInPlace},
			},
		}
	default:
		t.Fatalf("kind %s", kind)
	}
	if err := c.Create(backuptest.Context(t), j); err != nil {
		t.Fatalf("create %s: %v", kind, err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), j) })
	return j
}

// status returns the shared status of j.
func status(j job) *backupsv1alpha1.JobStatus {
	switch j := j.(type) {
	case *backupsv1alpha1.BackupJob:
		return &j.Status.JobStatus
	case *backupsv1alpha1.RestoreJob:
		return &j.Status.JobStatus
	}
	return nil
}

// withStatus wraps st in j's status type (so apply.Status sends it).
func withStatus(j job, st backupsv1alpha1.JobStatus) any {
	switch j.(type) {
	case *backupsv1alpha1.BackupJob:
		return backupsv1alpha1.BackupJobStatus{JobStatus: st}
	default:
		return backupsv1alpha1.RestoreJobStatus{JobStatus: st}
	}
}

// bind writes what the binder writes when it binds j at boundTime to the
// driver x: the binding, phase Pending, DriverBound=True and
// Reconciling=True WaitingForDriver (and, for a BackupJob, the
// application snapshot).
func bind(t *testing.T, j job, boundTime time.Time, timeouts backupsv1alpha1.Timeouts) {
	t.Helper()
	now := metav1.NewTime(boundTime.UTC().Truncate(time.Second))
	st := backupsv1alpha1.JobStatus{
		ObservedGeneration: 1,
		Phase:              backupsv1alpha1.PhasePending,
		Binding: &backupsv1alpha1.Binding{
			DriverRef:       backupsv1alpha1.DriverRef{Name: "x", ProtocolVersion: backupsv1alpha1.ProtocolVersion},
			Strategy:        backupsv1alpha1.Strategy{Kind: "X", Parameters: &apiextensionsv1.JSON{Raw: []byte(`{"bucket":"b"}`)}},
			BackupClassName: "default",
			Timeouts:        timeouts,
			BoundTime:       now,
		},
		Conditions: []metav1.Condition{
			{Type: backupsv1alpha1.ConditionDriverBound, Status: metav1.ConditionTrue, Reason: backupsv1alpha1.ReasonBound, Message: "bound to BackupDriver x", ObservedGeneration: 1, LastTransitionTime: now},
			{Type: backupsv1alpha1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: backupsv1alpha1.ReasonWaitingForDriver, Message: "waiting for x to claim the job", ObservedGeneration: 1, LastTransitionTime: now},
		},
	}
	var body any = withStatus(j, st)
	if b, ok := body.(backupsv1alpha1.BackupJobStatus); ok {
		b.ApplicationSnapshot = &apiextensionsv1.JSON{Raw: []byte(`{"size":"1Gi"}`)}
		body = b
	}
	if err := apply.Status(backuptest.Context(t), c, j, body, backupsv1alpha1.CoreFieldManager); err != nil {
		t.Fatalf("bind: %v", err)
	}
}

// claim is what the driver x writes of a run: phase Running, its claim
// (holder, times, lease) and, when progress is not zero, a progress
// report. Every call is the driver's whole intent.
type claim struct {
	holder            string
	acquire, renew    time.Time
	leaseSeconds      int32
	takeovers         int32
	start, progressAt time.Time
}

func (cl claim) apply(t *testing.T, j job) {
	t.Helper()
	st := backupsv1alpha1.JobStatus{
		Phase: backupsv1alpha1.PhaseRunning,
		Claim: &backupsv1alpha1.Claim{
			HolderIdentity: cl.holder, AcquireTime: metav1.NewMicroTime(cl.acquire), RenewTime: metav1.NewMicroTime(cl.renew),
			LeaseDurationSeconds: cl.leaseSeconds, Takeovers: cl.takeovers,
		},
		StartTime: &metav1.Time{Time: cl.start.UTC().Truncate(time.Second)},
	}
	if !cl.progressAt.IsZero() {
		st.Progress = &backupsv1alpha1.Progress{Time: metav1.NewTime(cl.progressAt.UTC().Truncate(time.Second)), Percent: ptr.To[int32](50), Message: "copied 1 of 2 volumes"}
	}
	if err := apply.Status(backuptest.Context(t), c, j, withStatus(j, st), driver); err != nil {
		t.Fatalf("driver apply: %v", err)
	}
}

func get(t *testing.T, j job) job {
	t.Helper()
	got := j.DeepCopyObject().(job)
	if err := c.Get(backuptest.Context(t), client.ObjectKeyFromObject(j), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func find(j job, typ string) *metav1.Condition {
	for _, c := range j.GetConditions() {
		if c.Type == typ {
			return &c
		}
	}
	return nil
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
