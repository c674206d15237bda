package mariadbdriver

import (
	"context"
	"encoding/json"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// ReconcileRestore restores run.Backup into run.Target. Mode InPlace: a
// k8s.mariadb.com Restore of the target's MariaDB from the Backup's
// k8s.mariadb.com Backup, owned by the RestoreJob, mapped like a backup
// (ClassifyComplete). Mode NewApplication: the core created the
// application with the Backup's restoreOverlay, so its MariaDB bootstraps
// from the backup; the run waits for it (ClassifyRestoredMariaDB).
func (d Driver) ReconcileRestore(ctx context.Context, run *driver.RestoreRun) (driver.Outcome, error) {
	var p Parameters
	wait, err := parse(&p, run.DecodeParameters)
	if err != nil {
		return driver.Outcome{}, err
	}
	dd, err := driverData(run.Backup)
	if err != nil {
		return driver.Outcome{}, err
	}
	job := run.Job
	if run.Backup.Namespace != job.Namespace {
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed,
			"Backup %s/%s is in another namespace than the RestoreJob (%s): a MariaDB restores only from a k8s.mariadb.com Backup of its own namespace; restore in %s",
			run.Backup.Namespace, run.Backup.Name, job.Namespace, run.Backup.Namespace)
	}
	target := MariaDBName(run.Target.Name)
	var v Verdict
	if job.Spec.Target.Mode == v1alpha1.RestoreNewApplication {
		v, err = d.newApplication(ctx, run, target, dd, wait)
	} else {
		v, err = d.inPlace(ctx, run, target, dd, wait)
	}
	if err != nil {
		return driver.Outcome{}, err
	}
	switch v.Phase {
	case Failed:
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed, "%s", v.Message)
	case Succeeded:
		return driver.Outcome{Done: true, Progress: &driver.Progress{Percent: ptr.To[int32](100), Message: v.Message}}, nil
	}
	return driver.Outcome{Progress: &driver.Progress{Message: v.Message}}, nil
}

// inPlace creates or adopts the run's Restore and maps it.
func (d Driver) inPlace(ctx context.Context, run *driver.RestoreRun, target string, dd DriverData, wait time.Duration) (Verdict, error) {
	job := run.Job
	r := New(RestoreGVK)
	r.SetName(run.ObjectName("restore"))
	r.SetNamespace(job.Namespace)
	r.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: "RestoreJob", Name: job.Name, UID: job.UID,
	}})
	r.Object["spec"] = map[string]any{
		"mariaDbRef": map[string]any{"name": target},
		"backupRef":  map[string]any{"name": dd.Backup},
	}
	if _, err := run.CreateOrAdopt(ctx, r); err != nil {
		return Verdict{}, invalid(err, "Restore")
	}
	return ClassifyComplete(describe(r), conditionsOf(r), r.GetCreationTimestamp().Time, d.now(), wait), nil
}

// newApplication reads the new application's MariaDB: missing, it is
// waited for (the core and Flux create it); made without the overlay, the
// run fails.
func (d Driver) newApplication(ctx context.Context, run *driver.RestoreRun, target string, dd DriverData, wait time.Duration) (Verdict, error) {
	job := run.Job
	m := New(MariaDBGVK)
	what := "MariaDB " + job.Namespace + "/" + target
	if err := run.Client.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: target}, m); err != nil {
		if !apierrors.IsNotFound(err) {
			return Verdict{}, err
		}
		since := job.CreationTimestamp.Time
		if job.Status.StartTime != nil {
			since = job.Status.StartTime.Time
		}
		return waiting(what+": waiting for the new application's chart to create it", since, d.now(), wait), nil
	}
	if got, _, _ := unstructured.NestedString(m.Object, "spec", "bootstrapFrom", "backupRef", "name"); got != dd.Backup {
		return Verdict{Failed, what + " does not bootstrap from k8s.mariadb.com Backup " + dd.Backup +
			" (spec.bootstrapFrom.backupRef.name is \"" + got + "\"): it was not made from this Backup's restoreOverlay; delete it and restore again"}, nil
	}
	return ClassifyRestoredMariaDB(what, conditionsOf(m), m.GetCreationTimestamp().Time, d.now(), wait), nil
}

// driverData decodes the Backup's spec.driverData.
func driverData(b *v1alpha1.Backup) (DriverData, error) {
	var dd DriverData
	if b.Spec.DriverData == nil || json.Unmarshal(b.Spec.DriverData.Raw, &dd) != nil || dd.Backup == "" {
		return dd, driver.Fail(v1alpha1.ReasonBackendFailed, "Backup %s/%s has no MariaDB driverData (backup): it was not taken by this driver", b.Namespace, b.Name)
	}
	return dd, nil
}
