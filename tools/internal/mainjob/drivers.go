package mainjob

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/tools/internal/podrun"
)

// backupDrivers are the catalogs' backup drivers the job runs as processes:
// the Deployment each driver component's chart installed in its namespace,
// run with that Deployment's arguments, as its ServiceAccount.
var backupDrivers = []struct{ component, namespace string }{
	{"cnpg-backup-driver", "cozy-cnpg-backup-driver"},
	{"velero-backup-driver", "cozy-velero-backup-driver"},
}

// The object store the cluster operator configures for the CNPG
// BackupClass (through the services Package's component values), and the
// Secret with its credentials in the driver's namespace. Nothing connects
// to it here: no CNPG operator runs.
const (
	objectStoreSecret = "demo-object-store"
	objectStorePath   = "s3://demo-backups/postgres"
)

// serviceValues are the services Package's values of its driver
// component: the shipped BackupClass "postgres" backs up to the object
// store above.
func serviceValues() map[string]any {
	return map[string]any{"backupClass": map[string]any{"parameters": map[string]any{
		"method": "barmanObjectStore",
		"barmanObjectStore": map[string]any{
			"destinationPath": objectStorePath, "credentialsSecret": objectStoreSecret,
		},
	}}}
}

// startDrivers runs each catalog backup driver as a process (contract K7:
// a driver is its catalog's component), the way its Deployment would run
// it in a pod: the container's arguments with the pod's environment, as
// the Deployment's ServiceAccount (a token from the TokenRequest API, as a
// kubelet mounts it), so the rights it has are exactly the chart's RBAC.
// Only the health probe's address moves to a free loopback port.
func (j *job) startDrivers(ctx context.Context) error {
	if j.cfg.StartProcess == nil || j.cfg.BinDir == "" {
		return fmt.Errorf("no way to start the backup drivers: Config.StartProcess and Config.BinDir are required (cozystack-local main-job sets them)")
	}
	for _, d := range backupDrivers {
		if err := j.startDriver(ctx, d.component, d.namespace); err != nil {
			return fmt.Errorf("%s: %w", d.component, err)
		}
	}
	return nil
}

func (j *job) startDriver(ctx context.Context, component, ns string) error {
	var list appsv1.DeploymentList
	if err := j.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return err
	}
	if len(list.Items) != 1 {
		return fmt.Errorf("%d Deployments in %s, want the one its chart installs", len(list.Items), ns)
	}
	d := list.Items[0]
	if len(d.Spec.Template.Spec.Containers) != 1 {
		return fmt.Errorf("Deployment %s/%s has %d containers, want 1", ns, d.Name, len(d.Spec.Template.Spec.Containers))
	}
	ctr := d.Spec.Template.Spec.Containers[0]
	args, binds, err := podrun.Args(ctr, ns, d.Name+"-local")
	if err != nil {
		return fmt.Errorf("Deployment %s/%s: %w", ns, d.Name, err)
	}
	health, ok := binds["--health-probe-bind-address"]
	if !ok {
		return fmt.Errorf("Deployment %s/%s runs its driver without --health-probe-bind-address: its chart must set it (its probes use it)", ns, d.Name)
	}
	sa := d.Spec.Template.Spec.ServiceAccountName
	if err := os.MkdirAll(j.cfg.WorkDir, 0o700); err != nil {
		return err
	}
	kubeconfig := filepath.Join(j.cfg.WorkDir, ns+"."+sa+".kubeconfig")
	if err := podrun.Kubeconfig(ctx, j.cfg.Kube, ns, sa, driverTokenTTL, kubeconfig); err != nil {
		return err
	}
	binary := filepath.Join(j.cfg.BinDir, component)
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("%w: build it with `make api`", err)
	}
	args = append(args, "--kubeconfig="+kubeconfig)
	if err := j.cfg.StartProcess(ctx, component, binary, args, "http://"+health+"/readyz"); err != nil {
		return err
	}
	j.printf("  %s runs as system:serviceaccount:%s:%s with the arguments of Deployment %s", component, ns, sa, d.Name)
	return nil
}

// driverTokenTTL is the life of a driver's token. A kubelet would renew
// it; the local control plane keeps running after the job, so it is long.
const driverTokenTTL = 7 * 24 * time.Hour

// configureBackups is the cluster operator's part: the credentials of
// the object store the CNPG BackupClass names (its values were set on the
// services Package by install), in the driver's namespace.
func (j *job) configureBackups(ctx context.Context) error {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: backupDrivers[0].namespace, Name: objectStoreSecret},
		StringData: map[string]string{"ACCESS_KEY_ID": "demo", "ACCESS_SECRET_KEY": "demo-secret"},
	}
	if err := j.c.Patch(ctx, s, client.Apply, fieldManager, client.ForceOwnership); err != nil {
		return fmt.Errorf("Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	for _, bc := range backupCases() {
		var class v1alpha1.BackupClass
		if err := j.poll(ctx, func() (bool, error) { return j.c.Get(ctx, client.ObjectKey{Name: bc.class}, &class) == nil, nil }); err != nil {
			return fmt.Errorf("BackupClass %s (shipped by the catalog serving %s) never appeared", bc.class, bc.kind)
		}
		for _, s := range class.Spec.Strategies {
			if s.Kind == bc.kind {
				j.printf("  BackupClass %s: %s by strategy %s", bc.class, bc.kind, s.Strategy.Kind)
			}
		}
	}
	return nil
}
