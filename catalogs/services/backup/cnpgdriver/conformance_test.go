package cnpgdriver_test

import (
	"context"
	"fmt"
	"testing"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"cozystack.io/catalogs/services/backup/cnpgdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/conformance"
	"cozystack.io/sdk/backup/driver"
)

// start runs one CNPG driver replica in a manager of its own until ctx
// ends.
func start(ctx context.Context, r conformance.Replica) error {
	mgr, err := ctrl.NewManager(env.Config, manager.Options{
		Scheme: cnpgdriver.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	o := cnpgdriver.DriverOptions(cnpgdriver.Options{Namespace: driverNamespace, Version: "0.1.0"})
	r.Apply(&o)
	if err := driver.Setup(mgr, cnpgdriver.New(), o); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// TestConformance runs the SDK's driver conformance suite against the CNPG
// driver on the local control plane with the upstream CNPG CRDs. Nothing
// runs CNPG here: the suite's Complete hook writes the CNPG Backup's
// completed status as CNPG would (completeBackup), and playApplications
// plays the Postgres applications, the core's new application and CNPG's
// recovery of its Cluster.
func TestConformance(t *testing.T) {
	c := need(t)
	playApplications(t, c)
	unknown := objectStoreParams()
	unknown["barmanObjectStore"].(map[string]any)["bucket"] = "backups"
	conformance.Run(t, conformance.Setup{
		Config: env.Config, Scheme: cnpgdriver.Scheme(), Driver: cnpgdriver.DefaultName, StrategyKind: cnpgdriver.StrategyKind,
		Namespace:         driverNamespace,
		Start:             start,
		Parameters:        params(t, objectStoreParams()),
		UnknownParameters: params(t, unknown),
		UnknownKey:        "barmanObjectStore.bucket",
		Backend:           cnpgBackups,
		Complete:          completeBackup,
		Squat: func(job *v1alpha1.BackupJob) client.Object {
			// A CNPG Backup someone else made under the name the driver
			// derives.
			bk := &cnpgv1.Backup{}
			bk.Name, bk.Namespace = driver.ObjectName(job.Name, "cnpg"), job.Namespace
			bk.Spec.Cluster.Name = cnpgdriver.ClusterName(job.Spec.ApplicationRef.Name)
			return bk
		},
		CheckRestore: func(ctx context.Context, c client.Client, rj *v1alpha1.RestoreJob, _ []client.Object) error {
			name := cnpgdriver.ClusterName(rj.Spec.Target.ApplicationName)
			cl := &cnpgv1.Cluster{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: name}, cl); err != nil {
				return err
			}
			// The source Backup's own path: that of the namespace it was
			// taken in.
			from := rj.Spec.BackupRef.Namespace
			if from == "" {
				from = rj.Namespace
			}
			return checkRecovery(cl, name, cnpgdriver.TenantPath(destination, from))
		},
	})
}

// checkRecovery checks that cl, the Cluster of release, bootstraps from the
// object store the driver's parameters name, at path (the source
// namespace's own, cnpgdriver.TenantPath), with the credentials the driver
// projects.
func checkRecovery(cl *cnpgv1.Cluster, release, path string) error {
	b := cl.Spec.Bootstrap
	if b == nil || b.Recovery == nil || b.Recovery.Source != "origin" {
		return fmt.Errorf("Cluster %s: bootstrap %+v, want recovery from the external cluster origin", cl.Name, b)
	}
	if len(cl.Spec.ExternalClusters) != 1 || cl.Spec.ExternalClusters[0].BarmanObjectStore == nil {
		return fmt.Errorf("Cluster %s: externalClusters %+v, want one object store", cl.Name, cl.Spec.ExternalClusters)
	}
	os := cl.Spec.ExternalClusters[0].BarmanObjectStore
	if os.DestinationPath != path || os.EndpointURL != endpoint || os.ServerName != cnpgdriver.ClusterName(app.Name) {
		return fmt.Errorf("Cluster %s: object store %s %s server %s, want %s %s server %s", cl.Name,
			os.DestinationPath, os.EndpointURL, os.ServerName, path, endpoint, cnpgdriver.ClusterName(app.Name))
	}
	if os.AWS == nil || os.AWS.AccessKeyIDReference == nil || os.AWS.AccessKeyIDReference.Name != cnpgdriver.RecoverySecretName(release) {
		return fmt.Errorf("Cluster %s: credentials %+v, want the Secret %s", cl.Name, os.AWS, cnpgdriver.RecoverySecretName(release))
	}
	if r := b.Recovery.RecoveryTarget; r == nil || r.BackupID == "" {
		return fmt.Errorf("Cluster %s: recoveryTarget %+v, want the backup's ID", cl.Name, r)
	}
	return nil
}
