package cnpgdriver

import (
	"context"
	"encoding/json"
	"fmt"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// RecoverySecretName is the Secret the postgres chart reads the object
// store's credentials from when it bootstraps release from a backup
// (charts/postgres/templates/cluster.yaml).
func RecoverySecretName(release string) string { return release + "-recovery-credentials" }

// RestoreOverlay returns the postgres chart values (a JSON merge patch of
// the application's spec) that make a new application's Cluster bootstrap
// from the backup dd: from the object store (barmanObjectStore; the
// chart's externalClusters) or from the CNPG Backup by name
// (volumeSnapshot; same namespace only).
func RestoreOverlay(dd DriverData) map[string]any {
	rec := map[string]any{}
	if dd.Method == string(cnpgv1.BackupMethodVolumeSnapshot) {
		rec["backupName"] = dd.BackupName
	} else {
		rec["destinationPath"] = dd.DestinationPath
		rec["serverName"] = dd.ServerName
		if dd.EndpointURL != "" {
			rec["endpointURL"] = dd.EndpointURL
		}
		if dd.BackupID != "" {
			rec["backupID"] = dd.BackupID
		}
	}
	return map[string]any{"bootstrap": map[string]any{"recovery": rec}}
}

// ReconcileRestore: InPlace is refused (CapabilityMissing); NewApplication
// projects the recovery credentials and waits for the new Cluster to be
// ready, bootstrapped from the backup.
func (d *Driver) ReconcileRestore(ctx context.Context, run *driver.RestoreRun) (driver.Outcome, error) {
	if run.Job.Spec.Target.Mode != v1alpha1.RestoreNewApplication {
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonCapabilityMissing,
			"the CNPG driver cannot restore in place: CNPG bootstraps a Cluster from a backup only when it creates it, never into a running Cluster; restore with target.mode %s (a new application), then move clients to it",
			v1alpha1.RestoreNewApplication)
	}
	var dd DriverData
	if run.Backup.Spec.DriverData != nil {
		if err := json.Unmarshal(run.Backup.Spec.DriverData.Raw, &dd); err != nil {
			return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed, "Backup %s: driverData is not the CNPG driver's: %v", run.Backup.Name, err)
		}
	}
	ns := run.Job.Namespace
	name := ClusterName(run.Target.Name)
	if dd.Method == string(cnpgv1.BackupMethodVolumeSnapshot) && dd.Namespace != "" && dd.Namespace != ns {
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed,
			"Backup %s/%s holds volume snapshots, which CNPG restores only in their own namespace %s, not in %s: restore in %s",
			run.Backup.Namespace, run.Backup.Name, dd.Namespace, ns, dd.Namespace)
	}
	if dd.Method != string(cnpgv1.BackupMethodVolumeSnapshot) {
		p := &Parameters{}
		if err := run.DecodeParameters(p); err != nil {
			return driver.Outcome{}, err
		}
		if err := p.validate(); err != nil {
			return driver.Outcome{}, err
		}
		if p.BarmanObjectStore != nil {
			if _, err := driver.ProjectSecret(ctx, run.Client, run.Namespace, p.BarmanObjectStore.CredentialsSecret, run.Job,
				run.Labels(), RecoverySecretName(name)); err != nil {
				return driver.Outcome{}, err
			}
		}
	}
	cluster := &cnpgv1.Cluster{}
	if err := run.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return waiting(fmt.Sprintf("waiting for the CNPG Cluster %s/%s of the new application %s", ns, name, run.Target.Name)), nil
		}
		return driver.Outcome{}, err
	}
	if cluster.Spec.Bootstrap == nil || cluster.Spec.Bootstrap.Recovery == nil {
		return driver.Outcome{}, driver.Fail(v1alpha1.ReasonBackendFailed,
			"CNPG Cluster %s/%s does not bootstrap from a backup (no spec.bootstrap.recovery): it was not made from Backup %s's restoreOverlay; delete the application %s and restore again",
			ns, name, run.Backup.Name, run.Target.Name)
	}
	if ClusterReady(cluster) {
		return driver.Outcome{Done: true}, nil
	}
	phase := cluster.Status.Phase
	if phase == "" {
		phase = "not yet seen by the CNPG operator"
	}
	return driver.Outcome{RequeueAfter: pollInterval, Progress: &driver.Progress{Percent: ptr.To(int32(50)),
		Message: fmt.Sprintf("CNPG Cluster %s/%s is recovering from the backup: %s (%d/%d instances ready)",
			ns, name, phase, cluster.Status.ReadyInstances, cluster.Status.Instances)}}, nil
}

// ClusterReady reports whether CNPG reports cluster healthy: its condition
// Ready is True, or its phase is "Cluster in healthy state" with every
// instance ready.
func ClusterReady(cluster *cnpgv1.Cluster) bool {
	if c := apimeta.FindStatusCondition(cluster.Status.Conditions, string(cnpgv1.ConditionClusterReady)); c != nil {
		return c.Status == "True"
	}
	return cluster.Status.Phase == cnpgv1.PhaseHealthy && cluster.Status.Instances > 0 &&
		cluster.Status.ReadyInstances == cluster.Status.Instances
}

// CancelRestore deletes the recovery credentials the run projected.
func (d *Driver) CancelRestore(ctx context.Context, run *driver.RestoreRun) error {
	return run.Client.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(run.Job.Namespace),
		client.MatchingLabels{v1alpha1.LabelRun: string(run.UID())})
}
