package binder_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/binder"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/testenv"
)

// No driver runs in these tests: they write what a driver would with an
// admin client, its BackupDriver registration and the Lease it renews
// (backuptest.RegisterDriver, as sdk/backup/driver does both), and what
// cozystack-api would, the application's HelmRelease with its K1 labels
// (backuptest.Application).

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(backuptest.Main(m, &env)) }

// c is an admin client knowing every kind used here.
var c client.Client

// need skips under -short, installs the CRDs (and the drivers' Lease
// namespace) once and makes the client c.
func need(t *testing.T) {
	t.Helper()
	c = backuptest.Client(t, env, backuptest.DriverNamespace)
}

// startBinder runs the binder in a manager of its own until stop or the
// end of the test.
func startBinder(t *testing.T, o binder.Options) (stop func()) {
	t.Helper()
	return backuptest.StartManager(t, env.Config, func(mgr ctrl.Manager) error { return binder.Setup(mgr, o) })
}

// class creates a BackupClass with one strategy for appKind, deleted at
// the end of the test.
func class(t *testing.T, name, appKind, strategyKind string, change func(*backupsv1alpha1.BackupClass)) *backupsv1alpha1.BackupClass {
	t.Helper()
	bc := &backupsv1alpha1.BackupClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: backupsv1alpha1.BackupClassSpec{Strategies: []backupsv1alpha1.ClassStrategy{{
			ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: backuptest.AppGroup, Kind: appKind},
			Strategy: backupsv1alpha1.Strategy{Kind: strategyKind,
				Parameters: &apiextensionsv1.JSON{Raw: []byte(`{"bucket":"b-` + strings.ToLower(name) + `"}`)}},
		}}},
	}
	if change != nil {
		change(bc)
	}
	if err := c.Create(backuptest.Context(t), bc); err != nil {
		t.Fatalf("create BackupClass: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), bc) })
	return bc
}

// backupJob creates a BackupJob of application {backuptest.AppGroup, appKind, app}
// with class className in ns.
func backupJob(t *testing.T, ns, name, appKind, app, className string) *backupsv1alpha1.BackupJob {
	t.Helper()
	j := &backupsv1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: backupsv1alpha1.BackupJobSpec{
			ApplicationRef: backupsv1alpha1.ApplicationRef{
				ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: backuptest.AppGroup, Kind: appKind}, Name: app,
			},
			BackupClassName: className,
		},
	}
	if err := c.Create(backuptest.Context(t), j); err != nil {
		t.Fatalf("create BackupJob: %v", err)
	}
	return j
}

func getJob(t *testing.T, j *backupsv1alpha1.BackupJob) *backupsv1alpha1.BackupJob {
	t.Helper()
	got := &backupsv1alpha1.BackupJob{}
	if err := c.Get(backuptest.Context(t), client.ObjectKeyFromObject(j), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// expect says what a job's DriverBound condition and phase must be.
type expect struct {
	status  metav1.ConditionStatus
	reason  string
	phase   backupsv1alpha1.JobPhase
	message []string
}

// waitFor polls until j's DriverBound condition has want's status and
// reason and its phase is want's, then checks the message and returns the
// job.
func waitFor(t *testing.T, j *backupsv1alpha1.BackupJob, want expect) *backupsv1alpha1.BackupJob {
	t.Helper()
	var got *backupsv1alpha1.BackupJob
	backuptest.Eventually(t, 60*time.Second, fmt.Sprintf("BackupJob %s DriverBound=%s %s, phase %s", j.Name, want.status, want.reason, want.phase), func() error {
		got = getJob(t, j)
		cond := apimeta.FindStatusCondition(got.Status.Conditions, backupsv1alpha1.ConditionDriverBound)
		if cond == nil || cond.Status != want.status || cond.Reason != want.reason || got.Status.Phase != want.phase {
			return fmt.Errorf("phase %q, DriverBound %s", got.Status.Phase, backuptest.ShowCondition(cond))
		}
		return nil
	})
	cond := apimeta.FindStatusCondition(got.Status.Conditions, backupsv1alpha1.ConditionDriverBound)
	for _, s := range want.message {
		if !strings.Contains(cond.Message, s) {
			t.Errorf("DriverBound message %q lacks %q", cond.Message, s)
		}
	}
	if cond.ObservedGeneration != got.Generation {
		t.Errorf("DriverBound observedGeneration %d, want %d", cond.ObservedGeneration, got.Generation)
	}
	return got
}

func clientKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }
