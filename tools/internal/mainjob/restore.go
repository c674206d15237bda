package mainjob

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// restore: the tenant restores the Backup as a new application; the core
// creates it from the captured spec and the driver's overlay, the driver
// restores into it, and the job completes the backend's part as its
// operator would.
func (j *job) restore(ctx context.Context, tc client.Client, bc backupCase, b *v1alpha1.Backup) error {
	rj := &v1alpha1.RestoreJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: TenantNS, Name: bc.restored},
		Spec: v1alpha1.RestoreJobSpec{
			BackupRef: v1alpha1.BackupRef{Name: b.Name},
			Target:    v1alpha1.RestoreTarget{Mode: v1alpha1.RestoreNewApplication, ApplicationName: bc.restored},
		},
	}
	if err := tc.Create(ctx, rj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create RestoreJob %s/%s as the tenant: %w", TenantNS, rj.Name, err)
	}
	key := client.ObjectKeyFromObject(rj)
	if err := j.c.Get(ctx, key, rj); err != nil {
		return err
	}
	// The new application comes first: the core creates it, helm-controller
	// installs its release.
	if err := j.waitApp(ctx, bc.appGVR, TenantNS, bc.restored); err != nil {
		return err
	}
	backendNS := bc.backendNamespace
	if backendNS == "" {
		backendNS = TenantNS
	}
	var (
		obj *unstructured.Unstructured
		err error
	)
	if bc.backendRestore == cnpgClusterGVR {
		// CNPG restores by bootstrapping the new application's own Cluster,
		// which its chart rendered from the Backup's overlay.
		obj, err = j.restoredCluster(ctx, bc.restored)
	} else {
		obj, err = j.backend(ctx, "RestoreJob "+rj.Name, bc.backendRestore, backendNS, rj.UID, func() (v1alpha1.JobStatus, error) {
			err := j.c.Get(ctx, key, rj)
			return rj.Status.JobStatus, err
		})
	}
	if err != nil {
		return err
	}
	if err := bc.completeRestore(ctx, j, obj); err != nil {
		return fmt.Errorf("write the status of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	j.printf("  %s %s/%s: wrote its status as its operator would (none runs here)", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	if err := j.waitJob(ctx, "RestoreJob", key, rj, func() v1alpha1.JobStatus { return rj.Status.JobStatus }); err != nil {
		return err
	}
	backend := fmt.Sprintf("%s.%s/%s", obj.GetKind(), bc.backendRestore.Group, obj.GetName())
	j.backups = append(j.backups, backupRow{"RestoreJob", rj.Name, bc.kind + "/" + bc.restored, rj.Status.Binding.DriverRef.Name, string(rj.Status.Phase), backend})
	return nil
}

// restoredCluster returns the new Postgres's CNPG Cluster once its chart
// rendered it, and checks it bootstraps from the backup (the overlay of
// the CNPG driver: bootstrap.recovery).
func (j *job) restoredCluster(ctx context.Context, app string) (*unstructured.Unstructured, error) {
	var u *unstructured.Unstructured
	last := "no Cluster yet"
	err := j.poll(ctx, func() (bool, error) {
		list, err := j.dyn.Resource(cnpgClusterGVR).Namespace(TenantNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for i := range list.Items {
			if strings.HasSuffix(list.Items[i].GetName(), "-"+app) {
				u = &list.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the CNPG Cluster of Postgres %s/%s: %s", TenantNS, app, last)
	}
	rec, ok, _ := unstructured.NestedMap(u.Object, "spec", "bootstrap", "recovery")
	if !ok {
		return nil, fmt.Errorf("Cluster %s/%s has no spec.bootstrap.recovery: the restored Postgres does not bootstrap from the backup", u.GetNamespace(), u.GetName())
	}
	j.printf("  Cluster %s/%s bootstraps from the backup: bootstrap.recovery %v", u.GetNamespace(), u.GetName(), rec)
	return u, nil
}
