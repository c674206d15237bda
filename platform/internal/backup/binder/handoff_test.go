package binder_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/binder"
	"cozystack.io/platform/internal/backup/drivers"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// The handoff of contract k7: platform version N serves strategy kind K
// with its "job" driver; version N+1 hands K to the catalog services
// (0.2.0) and its "job" driver no longer serves K. A job bound under N
// keeps its binding; a new job waits with DriverNotInstalled naming the
// catalog and version until the catalog's driver "cnpg" registers, then
// binds to it; no job ever has two drivers' field managers, and only the
// core wrote a binding. (The platform's restart is the binder's: a new
// manager with the new handoff list; no driver runs, registrations are
// written as the SDK writes them.)
func TestHandoff(t *testing.T) {
	need(t)
	const kind = "BnHandoff"
	clk := backuptest.FakeClock()
	ns := backuptest.Namespace(t, c, "binder-handoff")
	class(t, "bn-handoff", appKind, kind, nil)
	backuptest.Application(t, c, ns, appKind, "db", `{"version":16}`)

	// Version N: "job" serves K, nothing is handed over.
	job := backuptest.RegisterDriver(t, c, "job", []string{"Job", kind}, v1, clk.Now(), 3600)
	stopN := startBinder(t, binder.Options{Clock: clk, Resync: 200 * time.Millisecond, Handoff: []drivers.Handoff{}})
	job1 := waitFor(t, backupJob(t, ns, "job1", appKind, "db", "bn-handoff"), bound)
	if job1.Status.Binding.DriverRef.Name != "job" {
		t.Fatalf("job1 bound to %s, want job", job1.Status.Binding.DriverRef.Name)
	}
	binding1 := job1.Status.Binding.DeepCopy()
	stopN()

	// Upgrade to N+1: the "job" driver stops serving K (its new release
	// re-registers) and the binder starts with K handed over.
	if err := c.Get(backuptest.Context(t), clientKey("job"), job); err != nil {
		t.Fatal(err)
	}
	job.Spec.StrategyKinds = []string{"Job"}
	if err := c.Update(backuptest.Context(t), job); err != nil {
		t.Fatal(err)
	}
	startBinder(t, binder.Options{Clock: clk, Resync: 200 * time.Millisecond, Handoff: []drivers.Handoff{
		{StrategyKind: kind, Catalog: "services", MinVersion: "0.2.0"},
	}})
	job2 := backupJob(t, ns, "job2", appKind, "db", "bn-handoff")
	waitFor(t, job2, expect{status: metav1.ConditionFalse, phase: backupsv1alpha1.PhasePending, reason: backupsv1alpha1.ReasonDriverNotInstalled,
		message: []string{kind, "catalog services", "0.2.0"}})
	if got := getJob(t, job1); !reflect.DeepEqual(got.Status.Binding, binding1) || got.Labels[backupsv1alpha1.LabelDriver] != "job" {
		t.Errorf("job1 after the upgrade: binding %+v, label %q; want its binding to job unchanged", got.Status.Binding, got.Labels[backupsv1alpha1.LabelDriver])
	}

	// The catalog installs: its driver registers and job2 binds to it.
	backuptest.RegisterDriver(t, c, "cnpg", []string{kind}, v1, clk.Now(), 3600)
	got2 := waitFor(t, job2, bound)
	if n := got2.Status.Binding.DriverRef.Name; n != "cnpg" {
		t.Errorf("job2 bound to %s, want cnpg", n)
	}
	if got := getJob(t, job1); !reflect.DeepEqual(got.Status.Binding, binding1) {
		t.Errorf("job1's binding changed once cnpg registered: %+v", got.Status.Binding)
	}

	for _, j := range []*backupsv1alpha1.BackupJob{job1, job2} {
		got := getJob(t, j)
		var driversSeen []string
		for _, e := range got.ManagedFields {
			if strings.HasPrefix(e.Manager, "backup-driver-") {
				driversSeen = append(driversSeen, e.Manager)
			}
		}
		if len(driversSeen) > 1 {
			t.Errorf("%s has the field managers of two drivers: %v", j.Name, driversSeen)
		}
		if m := backuptest.StatusManagers(got, "f:binding"); len(m) != 1 || !m[backupsv1alpha1.CoreFieldManager] {
			t.Errorf("%s: status managers %v, want only %s, owning the binding", j.Name, m, backupsv1alpha1.CoreFieldManager)
		}
	}
}
