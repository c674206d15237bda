package binder_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/binder"
	"cozystack.io/platform/internal/backup/drivers"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/apply"
)

var bound = expect{status: metav1.ConditionTrue, phase: backupsv1alpha1.PhasePending, reason: backupsv1alpha1.ReasonBound}

// A bound job is never re-routed: editing its class (another strategy
// kind, served by another driver; other parameters and timeouts) or
// deleting it leaves the job's binding and label as they were, while new
// jobs follow the class; and the API server refuses a changed binding
// from anyone.
func TestBoundJobIsNotRerouted(t *testing.T) {
	need(t)
	clk := backuptest.FakeClock()
	startBinder(t, binder.Options{Clock: clk, Resync: 200 * time.Millisecond, Handoff: []drivers.Handoff{}})
	ns := backuptest.Namespace(t, c, "binder-reroute")
	backuptest.RegisterDriver(t, c, "bn-route-a", []string{"BnRouteA"}, v1, clk.Now(), 3600)
	backuptest.RegisterDriver(t, c, "bn-route-b", []string{"BnRouteB"}, v1, clk.Now(), 3600)
	bc := class(t, "bn-route", appKind, "BnRouteA", nil)
	backuptest.Application(t, c, ns, appKind, "db", `{"size":"1Gi"}`)

	job1 := waitFor(t, backupJob(t, ns, "job1", appKind, "db", bc.Name), bound)
	want := job1.Status.Binding.DeepCopy()
	if want.DriverRef.Name != "bn-route-a" {
		t.Fatalf("job1 bound to %s, want bn-route-a", want.DriverRef.Name)
	}
	unchanged := func(when string) {
		t.Helper()
		got := getJob(t, job1)
		if !reflect.DeepEqual(got.Status.Binding, want) {
			t.Errorf("%s: job1's binding changed:\n got %+v\nwant %+v", when, got.Status.Binding, want)
		}
		if l := got.Labels[backupsv1alpha1.LabelDriver]; l != "bn-route-a" {
			t.Errorf("%s: job1's driver label %q, want bn-route-a", when, l)
		}
	}

	// Edit the class: job2 follows it (so the binder saw the edit), job1
	// does not.
	if err := c.Get(backuptest.Context(t), clientKey(bc.Name), bc); err != nil {
		t.Fatal(err)
	}
	bc.Spec.Strategies[0].Strategy = backupsv1alpha1.Strategy{Kind: "BnRouteB", Parameters: &apiextensionsv1.JSON{Raw: []byte(`{"bucket":"other"}`)}}
	bc.Spec.PendingTimeout = &metav1.Duration{Duration: 7 * time.Minute}
	if err := c.Update(backuptest.Context(t), bc); err != nil {
		t.Fatal(err)
	}
	job2 := waitFor(t, backupJob(t, ns, "job2", appKind, "db", bc.Name), bound)
	if b := job2.Status.Binding; b.DriverRef.Name != "bn-route-b" || b.Timeouts.Pending.Duration != 7*time.Minute {
		t.Errorf("job2 bound to %s with pending %v, want bn-route-b and the edited 7m", b.DriverRef.Name, b.Timeouts.Pending)
	}
	unchanged("after the class edit")

	// Delete the class: job3 finds no class, job1 keeps its binding.
	if err := c.Delete(backuptest.Context(t), bc); err != nil {
		t.Fatal(err)
	}
	waitFor(t, backupJob(t, ns, "job3", appKind, "db", bc.Name), expect{status: metav1.ConditionFalse, phase: backupsv1alpha1.PhasePending, reason: backupsv1alpha1.ReasonClassNotFound})
	unchanged("after the class deletion")

	// Nobody can move the job to another driver.
	other := getJob(t, job1).Status.DeepCopy()
	other.Binding.DriverRef.Name = "bn-route-b"
	for _, manager := range []string{backupsv1alpha1.CoreFieldManager, backupsv1alpha1.DriverFieldManager("bn-route-b")} {
		err := apply.Status(backuptest.Context(t), c, job1, backupsv1alpha1.BackupJobStatus{JobStatus: backupsv1alpha1.JobStatus{Binding: other.Binding}}, manager)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "written once") {
			t.Errorf("rebinding job1 as %s: %v, want 422 (a binding is written once)", manager, err)
		}
	}
	unchanged("after the refused rebinding")
}

// A waiting job binds as soon as what it waits for appears, through the
// watches alone (Resync is an hour): a registration of a handed-over kind,
// a registration's Lease renewed, the class, the application.
func TestWaitingJobBinds(t *testing.T) {
	need(t)
	clk := backuptest.FakeClock()
	startBinder(t, binder.Options{Clock: clk, Resync: time.Hour, Handoff: []drivers.Handoff{
		{StrategyKind: "BnLate", Catalog: "services", MinVersion: "0.2.0"},
	}})
	ns := backuptest.Namespace(t, c, "binder-late")
	waitingFor := func(reason string) expect {
		return expect{status: metav1.ConditionFalse, phase: backupsv1alpha1.PhasePending, reason: reason}
	}
	for _, tc := range []struct {
		name    string
		waiting string
		before  func(t *testing.T)
		fix     func(t *testing.T)
	}{
		{
			name:    "registration appears",
			waiting: backupsv1alpha1.ReasonDriverNotInstalled,
			before: func(t *testing.T) {
				class(t, "bn-late-registration", appKind, "BnLate", nil)
			},
			fix: func(t *testing.T) {
				backuptest.RegisterDriver(t, c, "bn-late", []string{"BnLate"}, v1, clk.Now(), 3600)
			},
		},
		{
			name:    "lease renewed",
			waiting: backupsv1alpha1.ReasonDriverUnavailable,
			before: func(t *testing.T) {
				backuptest.RegisterDriver(t, c, "bn-renewed", []string{"BnRenewed"}, v1, clk.Now().Add(-time.Hour), 30)
				class(t, "bn-late-lease", appKind, "BnRenewed", nil)
			},
			fix: func(t *testing.T) { backuptest.RenewLease(t, c, "bn-renewed", clk.Now()) },
		},
		{
			name:    "class created",
			waiting: backupsv1alpha1.ReasonClassNotFound,
			before: func(t *testing.T) {
				backuptest.RegisterDriver(t, c, "bn-classlater", []string{"BnClassLater"}, v1, clk.Now(), 3600)
			},
			fix: func(t *testing.T) { class(t, "bn-late-class", appKind, "BnClassLater", nil) },
		},
		{
			name:    "application created",
			waiting: backupsv1alpha1.ReasonApplicationNotFound,
			before: func(t *testing.T) {
				backuptest.RegisterDriver(t, c, "bn-applater", []string{"BnAppLater"}, v1, clk.Now(), 3600)
				class(t, "bn-late-application", appKind, "BnAppLater", nil)
			},
			fix: func(t *testing.T) { backuptest.Application(t, c, ns, appKind, "late-app", `{}`) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.before(t)
			classes := map[string]string{
				backupsv1alpha1.ReasonDriverNotInstalled:  "bn-late-registration",
				backupsv1alpha1.ReasonDriverUnavailable:   "bn-late-lease",
				backupsv1alpha1.ReasonClassNotFound:       "bn-late-class",
				backupsv1alpha1.ReasonApplicationNotFound: "bn-late-application",
			}
			app := "late-app"
			if tc.waiting != backupsv1alpha1.ReasonApplicationNotFound {
				app = "app-" + strings.ReplaceAll(tc.name, " ", "-")
				backuptest.Application(t, c, ns, appKind, app, `{}`)
			}
			j := backupJob(t, ns, strings.ReplaceAll(tc.name, " ", "-"), appKind, app, classes[tc.waiting])
			waitFor(t, j, waitingFor(tc.waiting))
			tc.fix(t)
			got := waitFor(t, j, bound)
			if got.Status.Binding == nil {
				t.Fatal("bound without a binding")
			}
		})
	}
}

// A waiting job cancelled before any driver was bound ends Cancelled at
// once (no driver exists to end it, and nothing was created); the
// DriverBound condition saying why it waited stays. Before the fix it
// stayed Pending forever.
func TestCancelWaitingJob(t *testing.T) {
	need(t)
	clk := backuptest.FakeClock()
	startBinder(t, binder.Options{Clock: clk, Resync: 200 * time.Millisecond, Handoff: []drivers.Handoff{}})
	ns := backuptest.Namespace(t, c, "binder-cancel")
	bc := class(t, "bn-cancel", appKind, "BnCancelNobody", nil)
	backuptest.Application(t, c, ns, appKind, "db", `{}`)
	backuptest.RegisterDriver(t, c, "bn-cancel-down", []string{"BnCancelNobody"}, v1, clk.Now().Add(-time.Hour), 10)
	job := waitFor(t, backupJob(t, ns, "job1", appKind, "db", bc.Name),
		expect{status: metav1.ConditionFalse, phase: backupsv1alpha1.PhasePending, reason: backupsv1alpha1.ReasonDriverUnavailable})
	job.Spec.Cancel = true
	if err := c.Update(backuptest.Context(t), job); err != nil {
		t.Fatal(err)
	}
	backuptest.Eventually(t, 20*time.Second, "job1 Cancelled", func() error {
		got := getJob(t, job)
		ready := apimeta.FindStatusCondition(got.Status.Conditions, backupsv1alpha1.ConditionReady)
		bound := apimeta.FindStatusCondition(got.Status.Conditions, backupsv1alpha1.ConditionDriverBound)
		switch {
		case got.Status.Phase != backupsv1alpha1.PhaseCancelled:
			return fmt.Errorf("phase %q", got.Status.Phase)
		case ready == nil || ready.Reason != backupsv1alpha1.ReasonCancelled || got.Status.CompletionTime == nil:
			return fmt.Errorf("Ready %s, completionTime %v", backuptest.ShowCondition(ready), got.Status.CompletionTime)
		case bound == nil || bound.Reason != backupsv1alpha1.ReasonDriverUnavailable:
			return fmt.Errorf("DriverBound %s, want DriverUnavailable kept", backuptest.ShowCondition(bound))
		}
		return nil
	})
}
