package binder_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/binder"
	"cozystack.io/platform/internal/backup/drivers"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/snapshot"
)

const appKind = "Postgres"

var v1 = []string{backupsv1alpha1.ProtocolVersion}

// One row per DriverBound reason of contract k7 ("Binding"): the binder
// writes exactly that reason, a message naming what to act on, and the
// phase of the contract's table; waiting jobs stay Pending until
// driverWaitTimeout (the class's, or 1h without one) measured from their
// creation on the binder's clock, then fail with DriverWaitTimeout.
func TestReasons(t *testing.T) {
	need(t)
	clk := backuptest.FakeClock()
	startBinder(t, binder.Options{Clock: clk, Resync: 200 * time.Millisecond, Handoff: []drivers.Handoff{
		{StrategyKind: "BnNotInstalled", Catalog: "services", MinVersion: "0.2.0"},
		{StrategyKind: "BnWaitTimeout", Catalog: "virtualization", MinVersion: "1.3.0"},
	}})
	ns := backuptest.Namespace(t, c, "binder-reasons")
	now := clk.Now()
	hour := int32(3600)

	pending := expect{status: metav1.ConditionFalse, phase: backupsv1alpha1.PhasePending}
	failed := expect{status: metav1.ConditionFalse, phase: backupsv1alpha1.PhaseFailed}
	with := func(e expect, reason string, msg ...string) expect {
		e.reason, e.message = reason, msg
		return e
	}
	jobs := map[string]*backupsv1alpha1.BackupJob{}
	covered := map[string]bool{}

	for _, tc := range []struct {
		name string
		// setup writes the row's world and returns the job's class.
		setup func(t *testing.T) string
		// noApp: no application is created.
		noApp bool
		// values of the application (default {"size":"10Gi","replicas":2}).
		values string
		// step moves the clock once the job waits.
		step  time.Duration
		want  expect
		check func(t *testing.T, j *backupsv1alpha1.BackupJob)
	}{
		{
			name: "bound",
			setup: func(t *testing.T) string {
				backuptest.RegisterDriver(t, c, "bn-bound", []string{"BnBound"}, v1, now, hour)
				class(t, "bn-bound", appKind, "BnBound", func(bc *backupsv1alpha1.BackupClass) {
					bc.Spec.PendingTimeout = &metav1.Duration{Duration: 5 * time.Minute}
				})
				return "bn-bound"
			},
			want:  expect{status: metav1.ConditionTrue, phase: backupsv1alpha1.PhasePending, reason: backupsv1alpha1.ReasonBound, message: []string{"bn-bound", "v1alpha1"}},
			check: checkBound,
		},
		{
			name: "driver not installed",
			setup: func(t *testing.T) string {
				class(t, "bn-notinstalled", appKind, "BnNotInstalled", nil)
				return "bn-notinstalled"
			},
			want:  with(pending, backupsv1alpha1.ReasonDriverNotInstalled, "BnNotInstalled", "catalog services", "0.2.0"),
			check: checkWaiting,
		},
		{
			name: "driver unavailable",
			setup: func(t *testing.T) string {
				backuptest.RegisterDriver(t, c, "bn-unavailable", []string{"BnUnavailable"}, v1, now.Add(-time.Hour), 10)
				class(t, "bn-unavailable", appKind, "BnUnavailable", nil)
				return "bn-unavailable"
			},
			want:  with(pending, backupsv1alpha1.ReasonDriverUnavailable, "BackupDriver bn-unavailable", backuptest.DriverNamespace+"/backup-driver-bn-unavailable", "not renewed"),
			check: checkWaiting,
		},
		{
			name: "driver conflict",
			setup: func(t *testing.T) string {
				backuptest.RegisterDriver(t, c, "bn-conflict-a", []string{"BnConflict"}, v1, now, hour)
				backuptest.RegisterDriver(t, c, "bn-conflict-b", []string{"Other", "BnConflict"}, v1, now, hour)
				class(t, "bn-conflict", appKind, "BnConflict", nil)
				return "bn-conflict"
			},
			want:  with(pending, backupsv1alpha1.ReasonDriverConflict, "bn-conflict-a, bn-conflict-b", "BnConflict", "no driver runs the job"),
			check: checkWaiting,
		},
		{
			name: "protocol incompatible",
			setup: func(t *testing.T) string {
				backuptest.RegisterDriver(t, c, "bn-protocol", []string{"BnProtocol"}, []string{"v0alpha0", "v2"}, now, hour)
				class(t, "bn-protocol", appKind, "BnProtocol", nil)
				return "bn-protocol"
			},
			want:  with(pending, backupsv1alpha1.ReasonProtocolIncompatible, "bn-protocol", "[v0alpha0, v2]", "[v1alpha1]"),
			check: checkWaiting,
		},
		{
			name: "unknown strategy kind",
			setup: func(t *testing.T) string {
				class(t, "bn-unknown", appKind, "BnUnknown", nil)
				return "bn-unknown"
			},
			want:  with(failed, backupsv1alpha1.ReasonUnknownStrategyKind, "BnUnknown", "fix the BackupClass"),
			check: checkFailed(backupsv1alpha1.ReasonUnknownStrategyKind),
		},
		{
			name:  "class not found",
			setup: func(t *testing.T) string { return "bn-missing" },
			want:  with(pending, backupsv1alpha1.ReasonClassNotFound, "BackupClass bn-missing does not exist"),
			check: checkWaiting,
		},
		{
			name: "class has no strategy for the kind",
			setup: func(t *testing.T) string {
				class(t, "bn-nostrategy", "Redis", "BnNoStrategy", nil)
				return "bn-nostrategy"
			},
			want:  with(pending, backupsv1alpha1.ReasonClassNotFound, "BackupClass bn-nostrategy has no strategy for Postgres.apps.cozystack.io", "Redis.apps.cozystack.io"),
			check: checkWaiting,
		},
		{
			name: "application not found",
			setup: func(t *testing.T) string {
				backuptest.RegisterDriver(t, c, "bn-noapp", []string{"BnNoApp"}, v1, now, hour)
				class(t, "bn-noapp", appKind, "BnNoApp", nil)
				return "bn-noapp"
			},
			noApp: true,
			want:  with(pending, backupsv1alpha1.ReasonApplicationNotFound, "application Postgres db-application-not-found", "namespace "+ns, v1alpha1LabelName()),
			check: checkWaiting,
		},
		{
			// An application larger than a snapshot
			// holds fails its job, naming the size and the limit.
			name: "snapshot failed",
			setup: func(t *testing.T) string {
				backuptest.RegisterDriver(t, c, "bn-toolarge", []string{"BnTooLarge"}, v1, now, hour)
				class(t, "bn-toolarge", appKind, "BnTooLarge", nil)
				return "bn-toolarge"
			},
			values: `{"cloudInit":"` + strings.Repeat("x", 1_100_000) + `"}`,
			want:   with(failed, backupsv1alpha1.ReasonSnapshotFailed, "1100016 bytes", fmt.Sprintf("%d bytes a snapshot holds", snapshot.MaxBytes), "1 MiB"),
			check:  checkFailed(backupsv1alpha1.ReasonSnapshotFailed),
		},
		{
			name: "driver wait timeout",
			setup: func(t *testing.T) string {
				class(t, "bn-waittimeout", appKind, "BnWaitTimeout", func(bc *backupsv1alpha1.BackupClass) {
					bc.Spec.DriverWaitTimeout = &metav1.Duration{Duration: 2 * time.Minute}
				})
				return "bn-waittimeout"
			},
			step:  3 * time.Minute,
			want:  with(failed, backupsv1alpha1.ReasonDriverWaitTimeout, "driverWaitTimeout of 2m0s", "DriverNotInstalled", "catalog virtualization"),
			check: checkFailed(backupsv1alpha1.ReasonDriverWaitTimeout),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "-")
			className := tc.setup(t)
			app := "db-" + name
			if !tc.noApp {
				values := tc.values
				if values == "" {
					values = `{"size":"10Gi","replicas":2}`
				}
				backuptest.Application(t, c, ns, appKind, app, values)
			}
			j := backupJob(t, ns, name, appKind, app, className)
			jobs[tc.name] = j
			if tc.step > 0 {
				waitFor(t, j, with(pending, backupsv1alpha1.ReasonDriverNotInstalled))
				clk.Step(tc.step)
			}
			got := waitFor(t, j, tc.want)
			tc.check(t, got)
			covered[tc.want.reason] = true
		})
	}

	// A decision is written once: resyncs of waiting jobs (every 200ms
	// here) rewrite nothing.
	t.Run("waiting jobs are not rewritten", func(t *testing.T) {
		rvs := map[string]string{}
		for name, j := range jobs {
			rvs[name] = getJob(t, j).ResourceVersion
		}
		time.Sleep(time.Second)
		for name, j := range jobs {
			if rv := getJob(t, j).ResourceVersion; rv != rvs[name] {
				t.Errorf("%s: rewritten without a change (resourceVersion %s, then %s)", name, rvs[name], rv)
			}
		}
	})

	// A job whose class is missing waits the default driverWaitTimeout.
	t.Run("class not found waits the default 1h", func(t *testing.T) {
		j := jobs["class not found"]
		created := waitFor(t, j, with(pending, backupsv1alpha1.ReasonClassNotFound)).CreationTimestamp.Time
		clk.SetTime(created.Add(59 * time.Minute))
		time.Sleep(time.Second) // a few resyncs on the new time
		waitFor(t, j, with(pending, backupsv1alpha1.ReasonClassNotFound))
		clk.SetTime(created.Add(61 * time.Minute))
		got := waitFor(t, j, with(failed, backupsv1alpha1.ReasonDriverWaitTimeout, "driverWaitTimeout of 1h0m0s", "ClassNotFound", "bn-missing"))
		checkFailed(backupsv1alpha1.ReasonDriverWaitTimeout)(t, got)
	})

	for _, r := range backupsv1alpha1.BinderReasons {
		if !covered[r] {
			t.Errorf("no row covers DriverBound reason %s", r)
		}
	}
}

func v1alpha1LabelName() string { return "apps.cozystack.io/application.name=db-application-not-found" }

// checkBound: the binding holds the driver, the class's strategy and
// timeouts (defaults filled in); the snapshot is the application's
// values; the job is labelled with its driver; Reconciling says it waits
// for the claim; only the core wrote status.binding.
func checkBound(t *testing.T, j *backupsv1alpha1.BackupJob) {
	t.Helper()
	b := j.Status.Binding
	if b == nil {
		t.Fatal("no binding")
	}
	if b.DriverRef != (backupsv1alpha1.DriverRef{Name: "bn-bound", ProtocolVersion: "v1alpha1"}) {
		t.Errorf("driverRef %+v", b.DriverRef)
	}
	if b.Strategy.Kind != "BnBound" || b.Strategy.Parameters == nil || string(b.Strategy.Parameters.Raw) != `{"bucket":"b-bn-bound"}` {
		t.Errorf("strategy %s %v, want BnBound with the class's parameters", b.Strategy.Kind, b.Strategy.Parameters)
	}
	if b.BackupClassName != "bn-bound" {
		t.Errorf("class %q", b.BackupClassName)
	}
	to := b.Timeouts
	if to.Pending.Duration != 5*time.Minute || to.Run.Duration != 6*time.Hour || to.Stall.Duration != 15*time.Minute || to.DriverWait.Duration != time.Hour {
		t.Errorf("timeouts %v %v %v %v, want 5m (class) and the defaults 6h 15m 1h", to.Pending, to.Run, to.Stall, to.DriverWait)
	}
	if b.BoundTime.IsZero() {
		t.Error("no boundTime")
	}
	if j.Status.ApplicationSnapshot != nil {
		t.Errorf("status.applicationSnapshot %s: the values are stored by reference only", j.Status.ApplicationSnapshot.Raw)
	}
	if s, err := snapshot.ForJob(backuptest.Context(t), c, j); err != nil || s == nil || !jsonEqual(s, `{"size":"10Gi","replicas":2}`) {
		t.Errorf("application snapshot %v (error %v), want the HelmRelease's values", s, err)
	}
	if l := j.Labels[backupsv1alpha1.LabelDriver]; l != "bn-bound" {
		// The label follows the status write: poll.
		backuptest.Eventually(t, 30*time.Second, "driver label", func() error {
			if l := getJob(t, j).Labels[backupsv1alpha1.LabelDriver]; l != "bn-bound" {
				return fmt.Errorf("label %q", l)
			}
			return nil
		})
	}
	rc := apimeta.FindStatusCondition(j.Status.Conditions, backupsv1alpha1.ConditionReconciling)
	if rc == nil || rc.Status != metav1.ConditionTrue || rc.Reason != backupsv1alpha1.ReasonWaitingForDriver || !strings.Contains(rc.Message, "5m0s") {
		t.Errorf("Reconciling %s, want True WaitingForDriver naming the pending timeout", backuptest.ShowCondition(rc))
	}
	if c := apimeta.FindStatusCondition(j.Status.Conditions, backupsv1alpha1.ConditionReady); c != nil {
		t.Errorf("Ready %s set by the binder on a bound job; it is the driver's", backuptest.ShowCondition(c))
	}
	if m := backuptest.StatusManagers(j, "f:binding"); len(m) != 1 || !m[backupsv1alpha1.CoreFieldManager] {
		t.Errorf("status managers %v, want only %s owning the binding", m, backupsv1alpha1.CoreFieldManager)
	}
}

func checkWaiting(t *testing.T, j *backupsv1alpha1.BackupJob) {
	t.Helper()
	if j.Status.Binding != nil || j.Labels[backupsv1alpha1.LabelDriver] != "" {
		t.Errorf("a waiting job has binding %+v, label %q", j.Status.Binding, j.Labels[backupsv1alpha1.LabelDriver])
	}
	rc := apimeta.FindStatusCondition(j.Status.Conditions, backupsv1alpha1.ConditionReconciling)
	if rc == nil || rc.Status != metav1.ConditionTrue || rc.Reason != backupsv1alpha1.ReasonWaitingForDriver || !strings.Contains(rc.Message, backupsv1alpha1.ReasonDriverWaitTimeout) {
		t.Errorf("Reconciling %s, want True WaitingForDriver naming the deadline", backuptest.ShowCondition(rc))
	}
	if c := apimeta.FindStatusCondition(j.Status.Conditions, backupsv1alpha1.ConditionReady); c != nil {
		t.Errorf("Ready %s on a waiting job", backuptest.ShowCondition(c))
	}
}

func checkFailed(reason string) func(t *testing.T, j *backupsv1alpha1.BackupJob) {
	return func(t *testing.T, j *backupsv1alpha1.BackupJob) {
		t.Helper()
		ready := apimeta.FindStatusCondition(j.Status.Conditions, backupsv1alpha1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != reason {
			t.Errorf("Ready %s, want False %s", backuptest.ShowCondition(ready), reason)
		}
		if c := apimeta.FindStatusCondition(j.Status.Conditions, backupsv1alpha1.ConditionReconciling); c != nil {
			t.Errorf("Reconciling %s on a failed job", backuptest.ShowCondition(c))
		}
		if j.Status.CompletionTime == nil || j.Status.Binding != nil {
			t.Errorf("completionTime %v, binding %+v: want a completion time and no binding", j.Status.CompletionTime, j.Status.Binding)
		}
	}
}

func jsonEqual(a *apiextensionsv1.JSON, b string) bool {
	var x, y any
	return json.Unmarshal(a.Raw, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}
