package runbounds_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/platform/internal/controller/backup/runbounds"
	"cozystack.io/platform/internal/controllermanager"
	"cozystack.io/platform/internal/install"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/testenv"
)

// Neither the binder nor a driver runs in these tests: they write what
// each would, by server-side apply under its field manager: the binder's
// binding (v1alpha1.CoreFieldManager) and a driver's claim, progress and
// phase (v1alpha1.DriverFieldManager("x")).

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.NewKlogr())
	os.Exit(testenv.Main(m, testenv.Options{}, &env))
}

var (
	once    sync.Once
	onceErr error
	c       client.Client
)

// driver is the field manager of the test's driver.
var driver = backupsv1alpha1.DriverFieldManager("x")

func need(t *testing.T) {
	t.Helper()
	testenv.Need(t, env)
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if onceErr = install.CRDs(ctx, env.Config, ""); onceErr != nil {
			return
		}
		c, onceErr = client.New(env.Config, client.Options{Scheme: controllermanager.Scheme()})
	})
	if onceErr != nil {
		t.Fatal(onceErr)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// startBounds runs the run bounds on clk in a manager of their own until
// the end of the test.
func startBounds(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 controllermanager.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := runbounds.Setup(mgr, runbounds.Options{Clock: clk, Resync: 200 * time.Millisecond}); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager stopped with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop within 30s")
		}
	})
}

func namespace(t *testing.T, name string) string {
	t.Helper()
	err := c.Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return name
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
	if err := c.Create(ctxT(t), j); err != nil {
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
	if err := apply.Status(ctxT(t), c, j, body, backupsv1alpha1.CoreFieldManager); err != nil {
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
	if err := apply.Status(ctxT(t), c, j, withStatus(j, st), driver); err != nil {
		t.Fatalf("driver apply: %v", err)
	}
}

func get(t *testing.T, j job) job {
	t.Helper()
	got := j.DeepCopyObject().(job)
	if err := c.Get(ctxT(t), client.ObjectKeyFromObject(j), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = cond()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s: %v", what, timeout, last)
	}
}

func find(j job, typ string) *metav1.Condition {
	for _, c := range j.GetConditions() {
		if c.Type == typ {
			return &c
		}
	}
	return nil
}

func show(c *metav1.Condition) string {
	if c == nil {
		return "absent"
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// owns reports whether manager's status entry in j's managedFields holds
// the field f (e.g. "f:claim").
func owns(j job, manager, f string) bool {
	for _, e := range j.GetManagedFields() {
		if e.Manager == manager && e.Subresource == "status" && e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.Raw), `"`+f+`"`) {
			return true
		}
	}
	return false
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
