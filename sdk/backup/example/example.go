package example

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// StrategyKind is the strategy kind the example serves.
const StrategyKind = "ConfigMap"

// Parameters are the strategy parameters a BackupClass gives the example,
// decoded strictly (an unknown key fails the run InvalidParameters).
type Parameters struct {
	// Note is a template (text/template, missingkey=error) over
	// {Job, Target}, written into the backend ConfigMap.
	Note string `json:"note"`
}

// StateKey is the ConfigMap key an outside party sets to StateComplete to
// finish a run, the way an upstream operator finishes its own object.
const (
	StateKey      = "state"
	StateRunning  = "Running"
	StateComplete = "Complete"
)

// Options returns the driver.Options of the example named name in
// namespace: strategy kind ConfigMap, capabilities Reclaim and
// RestoreToNew, watching ConfigMaps so a completed one wakes its run.
func Options(name, namespace string) driver.Options {
	return driver.Options{
		Name: name, Namespace: namespace, StrategyKinds: []string{StrategyKind},
		Capabilities: []v1alpha1.Capability{v1alpha1.CapabilityReclaim, v1alpha1.CapabilityRestoreToNew},
		Watches:      []client.Object{&corev1.ConfigMap{}},
	}
}

// Driver implements driver.Driver and driver.Reclaimer.
type Driver struct{}

// ValidateParameters decodes the parameters strictly and parses the note
// template, before anything is created.
func (Driver) ValidateParameters(_ context.Context, _ driver.Operation, s v1alpha1.Strategy) error {
	var p Parameters
	if err := driver.DecodeParameters(s.Parameters, &p); err != nil {
		return err
	}
	_, err := driver.Parse("note", p.Note)
	return err
}

// ReconcileBackup creates (or adopts) the run's ConfigMap and reports Done
// once it is complete, with the ConfigMap's name as the Backup's
// driverData.
func (d Driver) ReconcileBackup(ctx context.Context, run *driver.BackupRun) (driver.Outcome, error) {
	return d.object(ctx, &run.Run, "backup", run.Job.Spec.ApplicationRef.Name)
}

// ReconcileRestore does the same for a restore into run.Target.
func (d Driver) ReconcileRestore(ctx context.Context, run *driver.RestoreRun) (driver.Outcome, error) {
	return d.object(ctx, &run.Run, "restore", run.Target.Name)
}

// object is the whole backend: render, create or adopt, report. It is
// called again and again (level-based), so every step is idempotent.
func (Driver) object(ctx context.Context, run *driver.Run, role, target string) (driver.Outcome, error) {
	var p Parameters
	if err := run.DecodeParameters(&p); err != nil {
		return driver.Outcome{}, err
	}
	// Render everything before creating anything: a TemplateError then
	// leaves nothing behind.
	note, err := driver.Render("note", p.Note, map[string]any{"Job": run.Object().GetName(), "Target": target})
	if err != nil {
		return driver.Outcome{}, err
	}
	cm := &corev1.ConfigMap{}
	cm.Name, cm.Namespace = run.ObjectName(role), run.Object().GetNamespace()
	cm.Data = map[string]string{"note": note, "target": target, StateKey: StateRunning}
	// CreateOrAdopt labels it with the run: a retry, or a replica taking
	// the run over, adopts it instead of making a second one.
	if _, err := run.CreateOrAdopt(ctx, cm); err != nil {
		return driver.Outcome{}, err
	}
	if cm.Data[StateKey] == StateComplete {
		return driver.Outcome{Done: true, DriverData: map[string]string{"configMap": cm.Name}}, nil
	}
	return driver.Outcome{Progress: &driver.Progress{Message: "waiting for ConfigMap " + cm.Name}}, nil
}

// CancelBackup removes what the run created.
func (Driver) CancelBackup(ctx context.Context, run *driver.BackupRun) error {
	return deleteRun(ctx, run.Client, run.Job.Namespace, run.UID())
}

// CancelRestore removes what the run created.
func (Driver) CancelRestore(ctx context.Context, run *driver.RestoreRun) error {
	return deleteRun(ctx, run.Client, run.Job.Namespace, run.UID())
}

// Reclaim deletes a Backup's backend objects (the Reclaim capability);
// the SDK then releases the Backup's finalizer.
func (Driver) Reclaim(ctx context.Context, run *driver.ReclaimRun) (driver.Outcome, error) {
	b := run.Backup
	if err := deleteRun(ctx, run.Client, b.Namespace, types.UID(b.Labels[v1alpha1.LabelRun])); err != nil {
		return driver.Outcome{}, err
	}
	return driver.Outcome{Done: true}, nil
}

func deleteRun(ctx context.Context, c client.Client, ns string, run types.UID) error {
	return c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelRun: string(run)})
}
