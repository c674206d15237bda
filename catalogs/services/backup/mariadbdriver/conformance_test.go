package mariadbdriver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/catalogs/services/backup/mariadbdriver"
	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/conformance"
	"cozystack.io/sdk/backup/driver"
)

// The MariaDB driver passes the SDK's driver conformance suite on the local
// control plane with the upstream mariadb-operator CRDs. No operator runs
// here: the test writes the k8s.mariadb.com Backups' and Restores' status
// as the mariadb-operator would (complete), and plays the core, Flux and
// the operator for the restore into a new application (newApplications).
// The driver runs as the ServiceAccount of charts/mariadb-backup-driver,
// with that chart's RBAC only.
func TestConformance(t *testing.T) {
	c := need(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); newApplications(ctx, t, c) }()
	t.Cleanup(func() { cancel(); <-done })

	conformance.Run(t, conformance.Setup{
		Config: env.Config, Driver: mariadbdriver.DefaultName, StrategyKind: mariadbdriver.StrategyKind, Namespace: driverNamespace,
		Start: func(ctx context.Context, r conformance.Replica) error {
			o := mariadbdriver.DriverOptions(mariadbdriver.Options{Namespace: driverNamespace})
			r.Apply(&o)
			return driver.Start(ctx, driverConfig(), nil, mariadbdriver.Driver{}, o)
		},
		Parameters:        &apiextensionsv1.JSON{Raw: []byte(params)},
		UnknownParameters: &apiextensionsv1.JSON{Raw: []byte(`{"s3":{"bucket":"b","endpoint":"e","credentialsSecret":"s3-creds","retention":"7d"}}`)},
		UnknownKey:        "s3.retention",
		Backend:           backend,
		Complete:          complete,
		Squat: func(job *v1alpha1.BackupJob) client.Object {
			b := mariadbdriver.New(mariadbdriver.BackupGVK)
			b.SetName(driver.ObjectName(job.Name, "backup"))
			b.SetNamespace(job.Namespace)
			b.Object["spec"] = map[string]any{
				"mariaDbRef": map[string]any{"name": "someone-elses"},
				"storage":    map[string]any{"persistentVolumeClaim": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}},
			}
			return b
		},
		CheckRestore: func(ctx context.Context, c client.Client, rj *v1alpha1.RestoreJob, objs []client.Object) error {
			if len(objs) != 0 {
				return fmt.Errorf("a restore into a new application created %d backend objects, want none (the chart makes the MariaDB)", len(objs))
			}
			b := &v1alpha1.Backup{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: rj.Spec.BackupRef.Name}, b); err != nil {
				return err
			}
			var dd mariadbdriver.DriverData
			if err := json.Unmarshal(b.Spec.DriverData.Raw, &dd); err != nil {
				return err
			}
			m := mariadbdriver.New(mariadbdriver.MariaDBGVK)
			if err := c.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: mariadbdriver.MariaDBName(rj.Spec.Target.ApplicationName)}, m); err != nil {
				return err
			}
			if got, _, _ := unstructured.NestedString(m.Object, "spec", "bootstrapFrom", "backupRef", "name"); got != dd.Backup || dd.Backup == "" {
				return fmt.Errorf("MariaDB %s bootstraps from %q, want the backup's %q", m.GetName(), got, dd.Backup)
			}
			return nil
		},
	})
}
