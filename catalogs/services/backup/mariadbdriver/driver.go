package mariadbdriver

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// Driver implements driver.Driver and driver.Reclaimer for the strategy
// kind MariaDB.
type Driver struct {
	// Now is the clock of the wait bounds; nil means time.Now.
	Now func() time.Time
}

var (
	_ driver.Driver    = Driver{}
	_ driver.Reclaimer = Driver{}
)

func (d Driver) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// DriverData is the locator a Backup's spec.driverData holds.
type DriverData struct {
	// Backup is the k8s.mariadb.com Backup, in the Backup's namespace.
	Backup string `json:"backup"`
	// MariaDB is the MariaDB object backed up.
	MariaDB string `json:"mariadb"`
	// Storage is "s3://<bucket>/<prefix>" or "pvc".
	Storage string `json:"storage"`
}

// ValidateParameters decodes the parameters strictly and checks them
// (Parameters); every error ends the run before anything is created.
func (Driver) ValidateParameters(_ context.Context, _ driver.Operation, s v1alpha1.Strategy) error {
	var p Parameters
	_, err := parse(&p, func(into any) error { return driver.DecodeParameters(s.Parameters, into) })
	return err
}

// ReconcileBackup creates (or adopts) the run's k8s.mariadb.com Backup of
// the application's MariaDB and maps its Complete condition
// (ClassifyComplete); on success the Backup's driverData names it and its
// storage, and its restoreOverlay makes the mariadb chart bootstrap from
// it (RestoreOverlay).
func (d Driver) ReconcileBackup(ctx context.Context, run *driver.BackupRun) (driver.Outcome, error) {
	var p Parameters
	wait, err := parse(&p, run.DecodeParameters)
	if err != nil {
		return driver.Outcome{}, err
	}
	job := run.Job
	ns, app := job.Namespace, job.Spec.ApplicationRef.Name
	name := run.ObjectName("backup")
	secret := ""
	if p.S3 != nil {
		secret = run.ObjectName("cred-" + p.S3.CredentialsSecret)
	}
	st, err := storage(&p, ns, app, job.Name, name, secret)
	if err != nil {
		return driver.Outcome{}, err
	}
	// Rendered: only now may anything be created.
	if p.S3 != nil {
		if _, err := run.ProjectSecret(ctx, p.S3.CredentialsSecret); err != nil {
			return driver.Outcome{}, err
		}
	}
	spec := map[string]any{
		"mariaDbRef": map[string]any{"name": MariaDBName(app)},
		"storage":    st,
	}
	if p.Compression != "" {
		spec["compression"] = p.Compression
	}
	if p.MaxRetention != "" {
		spec["maxRetention"] = p.MaxRetention
	}
	b := New(BackupGVK)
	b.SetName(name)
	b.SetNamespace(ns)
	b.Object["spec"] = spec
	if _, err := run.CreateOrAdopt(ctx, b); err != nil {
		return driver.Outcome{}, invalid(err, "Backup")
	}
	if secret != "" {
		// The copy goes with the MariaDB Backup that reads it at restore
		// time, not only with the job (it is deleted when both are gone).
		if err := addOwner(ctx, run.Client, ns, secret, b); err != nil {
			return driver.Outcome{}, err
		}
	}
	v := ClassifyComplete(describe(b), conditionsOf(b), b.GetCreationTimestamp().Time, d.now(), wait)
	switch v.Phase {
	case Failed:
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed, "%s", v.Message)
	case Succeeded:
		return driver.Outcome{
			Done:           true,
			Progress:       &driver.Progress{Percent: ptr.To[int32](100), Message: v.Message},
			DriverData:     DriverData{Backup: name, MariaDB: MariaDBName(app), Storage: storageURL(st)},
			RestoreOverlay: RestoreOverlay(name),
		}, nil
	}
	return driver.Outcome{Progress: &driver.Progress{Message: v.Message}}, nil
}

// RestoreOverlay is the JSON merge patch of a MariaDB application's spec
// (charts/mariadb values) that makes its MariaDB bootstrap from the
// k8s.mariadb.com Backup backup of its namespace:
// {"bootstrap": {"backupName": backup}}.
func RestoreOverlay(backup string) map[string]any {
	return map[string]any{"bootstrap": map[string]any{"backupName": backup}}
}

func storageURL(st map[string]any) string {
	if s3, ok := st["s3"].(map[string]any); ok {
		return fmt.Sprintf("s3://%s/%s", s3["bucket"], s3["prefix"])
	}
	return "pvc"
}

// CancelBackup deletes the run's Backup and projected Secrets.
func (Driver) CancelBackup(ctx context.Context, run *driver.BackupRun) error {
	return deleteRun(ctx, run.Client, run.Job.Namespace, string(run.UID()))
}

// CancelRestore deletes the run's Restore (mode InPlace; mode
// NewApplication created nothing: the core owns the new application).
func (Driver) CancelRestore(ctx context.Context, run *driver.RestoreRun) error {
	return deleteRun(ctx, run.Client, run.Job.Namespace, string(run.UID()))
}

// Reclaim deletes the k8s.mariadb.com Backup of a Backup being deleted and
// the credentials projected for it. The backup files in a bucket stay
// (doc.go, "Reclaim").
func (Driver) Reclaim(ctx context.Context, run *driver.ReclaimRun) (driver.Outcome, error) {
	b := run.Backup
	if err := deleteRun(ctx, run.Client, b.Namespace, b.Labels[v1alpha1.LabelRun]); err != nil {
		return driver.Outcome{}, err
	}
	return driver.Outcome{Done: true}, nil
}

// deleteRun deletes the k8s.mariadb.com Backups and Restores and the
// Secrets of run in ns.
func deleteRun(ctx context.Context, c client.Client, ns, run string) error {
	if run == "" {
		return nil
	}
	sel := client.MatchingLabels{v1alpha1.LabelRun: run}
	for _, obj := range []client.Object{New(BackupGVK), New(RestoreGVK), &corev1.Secret{}} {
		if err := c.DeleteAllOf(ctx, obj, client.InNamespace(ns), sel, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// invalid turns the API server's refusal of a rendered object into the
// run's failure; other errors stay transient.
func invalid(err error, kind string) error {
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return driver.Fail(v1alpha1.ReasonBackendFailed, "the k8s.mariadb.com %s rendered from the strategy parameters is refused by the API server: %v", kind, err)
	}
	return err
}

// addOwner adds owner to the ownerReferences of the Secret ns/name.
func addOwner(ctx context.Context, c client.Client, ns, name string, owner *unstructured.Unstructured) error {
	s := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		return err
	}
	ref := metav1.OwnerReference{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID()}
	if slices.ContainsFunc(s.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == ref.UID }) {
		return nil
	}
	s.OwnerReferences = append(s.OwnerReferences, ref)
	return c.Update(ctx, s)
}

// conditionsOf reads status.conditions of an unstructured object; entries
// that do not decode are skipped.
func conditionsOf(u *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := make([]metav1.Condition, 0, len(raw))
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err == nil {
			out = append(out, c)
		}
	}
	return out
}

func describe(u *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
}
