package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
	"cozystack.io/sdk/backup/driver"
	snap "cozystack.io/sdk/backup/snapshot"
)

// Run runs the suite's subtests against the driver s describes.
func Run(t *testing.T, s Setup) {
	t.Helper()
	if s.Config == nil || s.Driver == "" || s.StrategyKind == "" || s.Namespace == "" || s.Start == nil ||
		s.UnknownParameters == nil || s.UnknownKey == "" || s.Backend == nil || s.Complete == nil {
		t.Fatal("conformance.Setup: Config, Driver, StrategyKind, Namespace, Start, UnknownParameters, UnknownKey, Backend and Complete are required")
	}
	if s.Scheme == nil {
		s.Scheme = driver.Scheme()
	}
	if s.ClaimDuration <= 0 {
		s.ClaimDuration = 6 * time.Second
	}
	if s.Timeout <= 0 {
		s.Timeout = 90 * time.Second
	}
	c, err := client.New(s.Config, client.Options{Scheme: s.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{s: s, c: c}
	e.namespace(t, s.Namespace)
	for _, st := range []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"registration", testRegistration},
		{"exclusivity", testExclusivity},
		{"cancel", testCancel},
		{"idempotency", testIdempotency},
		{"restore-new-application", testRestoreNewApplication},
		{"cleanup", testCleanup},
		{"deletion", testDeletion},
		{"unknown-options", testUnknownOptions},
	} {
		t.Run(st.name, func(t *testing.T) { st.fn(t, e) })
	}
}

// env is the suite's state: the Setup and a live client (the core's).
type env struct {
	s Setup
	c client.Client
}

func (e *env) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*e.s.Timeout)
	t.Cleanup(cancel)
	return ctx
}

// namespace creates ns when missing.
func (e *env) namespace(t *testing.T, ns string) {
	t.Helper()
	err := e.c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

// testNamespace creates a fresh namespace for one subtest.
func (e *env) testNamespace(t *testing.T) string {
	t.Helper()
	ns := "k7-" + rand.String(6)
	e.namespace(t, ns)
	t.Cleanup(func() {
		_ = e.c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	return ns
}

// replica starts one driver replica and returns a function stopping it and
// waiting for it (also run at cleanup).
func (e *env) replica(t *testing.T, identity string, wrap func(client.Client) client.Client) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	r := Replica{Identity: identity, ClaimDuration: e.s.ClaimDuration, LeaseDuration: e.s.ClaimDuration, WrapClient: wrap}
	go func() { done <- e.s.Start(ctx, r) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("replica %s stopped with %v", identity, err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("replica %s did not stop within 60s", identity)
		}
	}
	t.Cleanup(stop)
	return stop
}

// snapshot is the application's spec the core captures when it binds a
// BackupJob: {"version": "16", "replicas": 1}.
func snapshot() *apiextensionsv1.JSON {
	return &apiextensionsv1.JSON{Raw: []byte(`{"version":"16","replicas":1}`)}
}

var app = v1alpha1.ApplicationRef{ApplicationKind: v1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: "Postgres"}, Name: "db"}

// backupJob creates a BackupJob in ns and, playing the core, binds it to
// driverName (label and status.binding) with params; bound=false leaves
// it unbound (but labelled).
func (e *env) backupJob(t *testing.T, ns, name, driverName string, params *apiextensionsv1.JSON, bound bool) *v1alpha1.BackupJob {
	t.Helper()
	ctx := e.ctx(t)
	job := &v1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
			v1alpha1.LabelDriver: driverName, v1alpha1.LabelPlan: "nightly"}},
		Spec: v1alpha1.BackupJobSpec{ApplicationRef: app, BackupClassName: "conformance"},
	}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatalf("create BackupJob %s/%s: %v", ns, name, err)
	}
	if bound {
		e.bind(t, job, driverName, params, snapshot())
	}
	return e.getBackupJob(t, ns, name)
}

// coreStatus is the core's intent for a job's status.
type coreStatus struct {
	Phase                  v1alpha1.JobPhase        `json:"phase,omitempty"`
	Binding                *v1alpha1.Binding        `json:"binding,omitempty"`
	Conditions             []metav1.Condition       `json:"conditions,omitempty"`
	ApplicationSnapshotRef *v1alpha1.SnapshotRef    `json:"applicationSnapshotRef,omitempty"`
	TargetRef              *v1alpha1.ApplicationRef `json:"targetRef,omitempty"`
	PlanUID                types.UID                `json:"planUID,omitempty"`
}

// storeSnapshot stores values as the core does (contract k7,
// "Snapshots"): a ConfigMap of the canonical values in the job's
// namespace, and returns the reference to it.
func (e *env) storeSnapshot(t *testing.T, namespace string, values *apiextensionsv1.JSON) *v1alpha1.SnapshotRef {
	t.Helper()
	canonical, digest, err := snap.Canonical(values.Raw)
	if err != nil {
		t.Fatal(err)
	}
	name := snap.Name(app.Name, digest)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
		Labels: map[string]string{snap.LabelSnapshot: snap.LabelValues}}, Data: map[string]string{snap.DataKey: string(canonical)}}
	if err := e.c.Create(e.ctx(t), cm); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("store the application snapshot %s/%s: %v", namespace, name, err)
	}
	return &v1alpha1.SnapshotRef{ReleaseName: "postgres-" + app.Name, ReleaseGeneration: 1, Digest: digest, Size: int64(len(canonical)), ConfigMapName: name}
}

// planUID is the UID of the Plan "nightly" the suite's BackupJobs record
// in status.planUID, as the core does for the jobs a Plan creates.
const planUID = types.UID("0f0f0f0f-0000-4000-8000-00000000c0de")

// bind writes status.binding as the core would (apply.Status as
// v1alpha1.CoreFieldManager).
func (e *env) bind(t *testing.T, job client.Object, driverName string, params, snapshot *apiextensionsv1.JSON, target ...v1alpha1.ApplicationRef) {
	t.Helper()
	st := coreStatus{
		Phase: v1alpha1.PhasePending,
		Binding: &v1alpha1.Binding{
			DriverRef:       v1alpha1.DriverRef{Name: driverName, ProtocolVersion: v1alpha1.ProtocolVersion},
			Strategy:        v1alpha1.Strategy{Kind: e.s.StrategyKind, Parameters: params},
			BackupClassName: "conformance",
			BoundTime:       metav1.Now(),
		},
		Conditions: apply.Conditions(nil, time.Now(),
			apply.Condition(v1alpha1.ConditionDriverBound, metav1.ConditionTrue, v1alpha1.ReasonBound, 0, "bound to BackupDriver %s", driverName)),
	}
	if snapshot != nil {
		st.ApplicationSnapshotRef = e.storeSnapshot(t, job.GetNamespace(), snapshot)
	}
	if len(target) > 0 {
		st.TargetRef = &target[0]
	}
	if _, ok := job.(*v1alpha1.BackupJob); ok {
		st.PlanUID = planUID
	}
	if err := apply.Status(e.ctx(t), e.c, job, st, v1alpha1.CoreFieldManager); err != nil {
		t.Fatalf("bind %s: %v", job.GetName(), err)
	}
}

func (e *env) getBackupJob(t *testing.T, ns, name string) *v1alpha1.BackupJob {
	t.Helper()
	job := &v1alpha1.BackupJob{}
	if err := e.c.Get(e.ctx(t), types.NamespacedName{Namespace: ns, Name: name}, job); err != nil {
		t.Fatalf("get BackupJob %s/%s: %v", ns, name, err)
	}
	return job
}

// poll calls cond every 200ms until it returns true, an error, or the
// Setup's timeout; the failure says what was awaited and the last state.
func (e *env) poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(e.ctx(t), 200*time.Millisecond, e.s.Timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

// completeRuns finishes the backend objects of the runs, as their
// controller would.
func (e *env) completeRuns(ctx context.Context, runs ...types.UID) error {
	for _, run := range runs {
		objs, err := e.s.Backend(ctx, e.c, run)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if o.GetDeletionTimestamp() != nil {
				continue
			}
			if err := e.s.Complete(ctx, e.c, o); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return err
			}
		}
	}
	return nil
}

// waitBackupPhase waits for the job to reach phase, finishing the backend
// objects of finish meanwhile; it returns the job.
func (e *env) waitBackupPhase(t *testing.T, ns, name string, phase v1alpha1.JobPhase, finish ...types.UID) *v1alpha1.BackupJob {
	t.Helper()
	job := &v1alpha1.BackupJob{}
	e.poll(t, fmt.Sprintf("BackupJob %s/%s phase %s", ns, name, phase), func(ctx context.Context) (bool, error) {
		if err := e.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job); err != nil {
			return false, err
		}
		if job.Status.Phase == phase {
			return true, nil
		}
		if job.Status.Phase.Terminal() {
			t.Fatalf("BackupJob %s/%s ended %s (%s), want %s", ns, name, job.Status.Phase, readyOf(job.Status.Conditions), phase)
		}
		return false, e.completeRuns(ctx, finish...)
	})
	return job
}

func (e *env) waitRestorePhase(t *testing.T, ns, name string, phase v1alpha1.JobPhase, finish ...types.UID) *v1alpha1.RestoreJob {
	t.Helper()
	job := &v1alpha1.RestoreJob{}
	e.poll(t, fmt.Sprintf("RestoreJob %s/%s phase %s", ns, name, phase), func(ctx context.Context) (bool, error) {
		if err := e.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job); err != nil {
			return false, err
		}
		if job.Status.Phase == phase {
			return true, nil
		}
		if job.Status.Phase.Terminal() {
			t.Fatalf("RestoreJob %s/%s ended %s (%s), want %s", ns, name, job.Status.Phase, readyOf(job.Status.Conditions), phase)
		}
		return false, e.completeRuns(ctx, append([]types.UID{job.UID}, finish...)...)
	})
	return job
}

// succeededBackup runs a backup to success and returns the job and its
// Backup.
func (e *env) succeededBackup(t *testing.T, ns, name string) (*v1alpha1.BackupJob, *v1alpha1.Backup) {
	t.Helper()
	job := e.backupJob(t, ns, name, e.s.Driver, e.s.Parameters, true)
	job = e.waitBackupPhase(t, ns, name, v1alpha1.PhaseSucceeded, job.UID)
	checkReady(t, job.Status.Conditions, metav1.ConditionTrue, v1alpha1.ReasonSucceeded)
	if job.Status.BackupName == "" {
		t.Fatalf("BackupJob %s/%s succeeded without status.backupName", ns, name)
	}
	b := &v1alpha1.Backup{}
	if err := e.c.Get(e.ctx(t), types.NamespacedName{Namespace: ns, Name: job.Status.BackupName}, b); err != nil {
		t.Fatalf("Backup %s named by the job: %v", job.Status.BackupName, err)
	}
	return job, b
}

// backend lists the run's live backend objects.
func (e *env) backend(t *testing.T, run types.UID) []client.Object {
	t.Helper()
	objs, err := e.s.Backend(e.ctx(t), e.c, run)
	if err != nil {
		t.Fatalf("list backend objects of run %s: %v", run, err)
	}
	var live []client.Object
	for _, o := range objs {
		if o.GetDeletionTimestamp() == nil {
			live = append(live, o)
		}
	}
	return live
}

func (e *env) capabilities(t *testing.T) []v1alpha1.Capability {
	t.Helper()
	d := &v1alpha1.BackupDriver{}
	if err := e.c.Get(e.ctx(t), types.NamespacedName{Name: e.s.Driver}, d); err != nil {
		t.Fatalf("BackupDriver %s: %v", e.s.Driver, err)
	}
	return d.Spec.Capabilities
}

func readyOf(cs []metav1.Condition) string {
	c := apimeta.FindStatusCondition(cs, v1alpha1.ConditionReady)
	if c == nil {
		return "no Ready condition"
	}
	return fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
}

func checkReady(t *testing.T, cs []metav1.Condition, status metav1.ConditionStatus, reason string, contains ...string) {
	t.Helper()
	c := apimeta.FindStatusCondition(cs, v1alpha1.ConditionReady)
	if c == nil || c.Status != status || c.Reason != reason {
		t.Fatalf("got %s, want Ready=%s reason %s", readyOf(cs), status, reason)
	}
	for _, s := range contains {
		if !strings.Contains(c.Message, s) {
			t.Fatalf("Ready message %q does not name %q", c.Message, s)
		}
	}
}

// managers returns the field managers of obj's status.
func managers(obj client.Object) []string {
	var out []string
	for _, m := range obj.GetManagedFields() {
		out = append(out, m.Manager)
	}
	return out
}
