package backup_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
	"cozystack.io/sdk/backup/example"
)

// A platform upgrade that hands a strategy kind to a catalog, end to end
// with the real binaries. Release N: the core (the shipped handoff list)
// and the built-in Job driver back Postgres up with strategy Job; job1 is
// bound to the Job driver and running. Release N+1: the core restarts
// with a handoff list naming CNPG → catalog services 0.2.0, and the class
// now says CNPG. job1 finishes where it started; job2 waits with
// DriverNotInstalled naming the catalog and version; once the catalog's
// driver registers (here the SDK's example driver serving CNPG, standing
// in for the services catalog's), job2 binds to it and completes. No job
// ever has two drivers' field managers.
func TestHandoffAcrossUpgrade(t *testing.T) {
	need(t)
	ctx := backuptest.Context(t)
	ns := "backup-handoff"
	core := start(t, "core-n", "--controllers=backup-core", "--install-crds")
	start(t, "job-driver", "--controllers=backup-job-driver", "--backup-driver-identity=job-0")
	jobClass(t, "handoff")
	backuptest.Namespace(t, c, ns)
	application(t, ns, "db", `{"size":"1Gi"}`)
	newJob := func(name string) types.NamespacedName {
		j := &backupsv1alpha1.BackupJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: backupsv1alpha1.BackupJobSpec{
			ApplicationRef: backupsv1alpha1.ApplicationRef{
				ApplicationKind: backupsv1alpha1.ApplicationKind{APIGroup: "apps.cozystack.io", Kind: appKind}, Name: "db"},
			BackupClassName: "handoff",
		}}
		if err := c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		return client.ObjectKeyFromObject(j)
	}
	job1 := newJob("job1")
	backuptest.Eventually(t, 90*time.Second, "job1 running on the Job driver", func() error {
		j := getJob(t, job1)
		if j.Status.Phase != backupsv1alpha1.PhaseRunning || j.Status.Binding == nil || j.Status.Binding.DriverRef.Name != "job" {
			return fmt.Errorf("phase %q, binding %+v", j.Status.Phase, j.Status.Binding)
		}
		return nil
	})

	// The upgrade: the core of N+1, its handoff list, its class.
	core.kill()
	list := filepath.Join(t.TempDir(), "handoff.yaml")
	if err := os.WriteFile(list, []byte("handoff:\n  - {strategyKind: CNPG, catalog: services, minVersion: 0.2.0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, "core-n+1", "--controllers=backup-core", "--backup-handoff-file="+list)
	bc := &backupsv1alpha1.BackupClass{}
	if err := c.Get(ctx, types.NamespacedName{Name: "handoff"}, bc); err != nil {
		t.Fatal(err)
	}
	bc.Spec.Strategies[0].Strategy = backupsv1alpha1.Strategy{Kind: "CNPG", Parameters: &apiextensionsv1.JSON{Raw: []byte(`{"note":"{{ .Job }}"}`)}}
	if err := c.Update(ctx, bc); err != nil {
		t.Fatal(err)
	}
	job2 := newJob("job2")
	backuptest.Eventually(t, 60*time.Second, "job2 DriverNotInstalled naming services 0.2.0", func() error {
		j := getJob(t, job2)
		cond := apimeta.FindStatusCondition(j.Status.Conditions, backupsv1alpha1.ConditionDriverBound)
		if cond == nil || cond.Reason != backupsv1alpha1.ReasonDriverNotInstalled || j.Status.Phase != backupsv1alpha1.PhasePending {
			return fmt.Errorf("phase %q, DriverBound %+v", j.Status.Phase, cond)
		}
		if !strings.Contains(cond.Message, "services") || !strings.Contains(cond.Message, "0.2.0") {
			return fmt.Errorf("message %q names no catalog and version", cond.Message)
		}
		return nil
	})

	// job1 finishes where it started.
	j1 := getJob(t, job1)
	jobs := batchJobs(t, ns, j1.UID)
	if len(jobs) != 1 {
		t.Fatalf("%d batch Jobs for job1", len(jobs))
	}
	complete(t, &jobs[0])
	backuptest.Eventually(t, 60*time.Second, "job1 Succeeded on the Job driver", func() error {
		j := getJob(t, job1)
		if j.Status.Phase != backupsv1alpha1.PhaseSucceeded || j.Status.Binding.DriverRef.Name != "job" {
			return fmt.Errorf("phase %q, driver %s", j.Status.Phase, j.Status.Binding.DriverRef.Name)
		}
		return nil
	})

	// The catalog's driver registers: job2 binds to it and completes.
	dctx, stop := context.WithCancel(context.Background())
	defer stop()
	o := example.Options("services-cnpg", "cozy-system")
	o.StrategyKinds, o.Catalog, o.Version, o.SkipNameValidation = []string{"CNPG"}, "services", "0.2.0", true
	o.LeaseDuration, o.ClaimDuration = 10*time.Second, 5*time.Second
	go func() { _ = driver.Start(dctx, env.Config, nil, example.Driver{}, o) }()
	var cm *corev1.ConfigMap
	backuptest.Eventually(t, 60*time.Second, "job2 bound to the catalog's driver, running", func() error {
		j := getJob(t, job2)
		if j.Status.Binding == nil || j.Status.Binding.DriverRef.Name != "services-cnpg" || j.Status.Phase != backupsv1alpha1.PhaseRunning {
			return fmt.Errorf("phase %q, binding %+v", j.Status.Phase, j.Status.Binding)
		}
		var list corev1.ConfigMapList
		if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{backupsv1alpha1.LabelRun: string(j.UID)}); err != nil || len(list.Items) != 1 {
			return fmt.Errorf("%d backend ConfigMaps (%v)", len(list.Items), err)
		}
		cm = &list.Items[0]
		return nil
	})
	cm.Data[example.StateKey] = example.StateComplete
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	backuptest.Eventually(t, 60*time.Second, "job2 Succeeded", func() error {
		if j := getJob(t, job2); j.Status.Phase != backupsv1alpha1.PhaseSucceeded {
			return fmt.Errorf("phase %q", j.Status.Phase)
		}
		return nil
	})
	for key, want := range map[types.NamespacedName]string{job1: "job", job2: "services-cnpg"} {
		if m := driverManagers(getJob(t, key)); len(m) != 1 || m[0] != backupsv1alpha1.DriverFieldManager(want) {
			t.Errorf("%s: driver field managers %v, want only %s", key.Name, m, backupsv1alpha1.DriverFieldManager(want))
		}
	}
}
