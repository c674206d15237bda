package restore

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// verdict is the status, reason and message of one condition.
type verdict struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

// backupNamespace is the namespace of job's Backup: spec.backupRef's, or
// the job's when empty.
func backupNamespace(job *backupsv1alpha1.RestoreJob) string {
	if ns := job.Spec.BackupRef.Namespace; ns != "" {
		return ns
	}
	return job.Namespace
}

// grantFor returns the first grant (by name) that lets a RestoreJob of
// namespace from read the Backup named backup, or nil.
func grantFor(grants []backupsv1alpha1.BackupGrant, from, backup string) *backupsv1alpha1.BackupGrant {
	var found *backupsv1alpha1.BackupGrant
	for i := range grants {
		g := &grants[i]
		if g.DeletionTimestamp == nil && g.Allows(from, backup) && (found == nil || g.Name < found.Name) {
			found = g
		}
	}
	return found
}

// grantMissing is the Authorized=False verdict of a RestoreJob of
// namespace from that no grant lets read Backup ns/backup. It names the
// grant to create and says nothing of whether the Backup exists.
func grantMissing(from, ns, backup string) verdict {
	return verdict{metav1.ConditionFalse, backupsv1alpha1.ReasonGrantMissing, fmt.Sprintf(
		"no BackupGrant in namespace %s lets RestoreJobs of namespace %s read Backup %s: the owner of %s must create a BackupGrant (backups.cozystack.io/v1alpha1) in namespace %s with spec.from [{namespace: %s}] and spec.backupNames [%s] (or no backupNames, for every Backup of %s); the restore waits",
		ns, from, backup, ns, ns, from, backup, ns)}
}

// authorize decides whether job may read its Backup (contract k7,
// "Restores"), and returns the Backup when it may. Same namespace: the
// job's namespace holds the Backup. Another namespace: only when a
// BackupGrant there allows the job's namespace and the Backup's name; the
// grants are read before the Backup, and without one the verdict is
// GrantMissing whether the Backup exists or not, so a RestoreJob never
// learns what another namespace holds unless its owner granted it. A
// missing (or deleting) Backup the job may read is BackupNotFound. Errors
// are the reader's.
func authorize(ctx context.Context, r client.Reader, job *backupsv1alpha1.RestoreJob) (*backupsv1alpha1.Backup, verdict, error) {
	ns, name := backupNamespace(job), job.Spec.BackupRef.Name
	granted := verdict{metav1.ConditionTrue, backupsv1alpha1.ReasonGranted,
		fmt.Sprintf("Backup %s is in the RestoreJob's namespace", name)}
	if ns != job.Namespace {
		var grants backupsv1alpha1.BackupGrantList
		if err := r.List(ctx, &grants, client.InNamespace(ns)); err != nil {
			return nil, verdict{}, err
		}
		g := grantFor(grants.Items, job.Namespace, name)
		if g == nil {
			return nil, grantMissing(job.Namespace, ns, name), nil
		}
		granted.message = fmt.Sprintf("BackupGrant %s/%s lets RestoreJobs of namespace %s read Backup %s/%s", ns, g.Name, job.Namespace, ns, name)
	}
	b := &backupsv1alpha1.Backup{}
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, b)
	switch {
	case apierrors.IsNotFound(err) && ns == job.Namespace:
		return nil, verdict{metav1.ConditionFalse, backupsv1alpha1.ReasonBackupNotFound, fmt.Sprintf(
			"Backup %s does not exist in namespace %s: check spec.backupRef (kubectl get backups -n %s); the restore waits for it", name, ns, ns)}, nil
	case apierrors.IsNotFound(err):
		return nil, verdict{metav1.ConditionFalse, backupsv1alpha1.ReasonBackupNotFound, fmt.Sprintf(
			"Backup %s/%s does not exist, though %s: check spec.backupRef with the owner of namespace %s; the restore waits for it", ns, name, granted.message, ns)}, nil
	case err != nil:
		return nil, verdict{}, err
	case b.DeletionTimestamp != nil:
		return nil, verdict{metav1.ConditionFalse, backupsv1alpha1.ReasonBackupNotFound, fmt.Sprintf(
			"Backup %s/%s is being deleted (its driver reclaims the data): restore from another Backup", ns, name)}, nil
	}
	return b, granted, nil
}
