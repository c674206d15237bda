package mainjob

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// backend waits for the object of gvr in ns that the driver created for
// the job of UID uid (its run label), and fails early when the job ends
// first.
func (j *job) backend(ctx context.Context, what string, gvr schema.GroupVersionResource, ns string, uid types.UID, status func() (v1alpha1.JobStatus, error)) (*unstructured.Unstructured, error) {
	var u *unstructured.Unstructured
	last := "no driver has claimed it yet"
	err := j.poll(ctx, func() (bool, error) {
		st, err := status()
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = describeJob(st)
		if st.Phase.Terminal() && st.Phase != v1alpha1.PhaseSucceeded {
			return false, fmt.Errorf("%s ended %s", what, last)
		}
		list, err := j.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: fmt.Sprintf("%s=%v", v1alpha1.LabelRun, uid)})
		if err != nil || len(list.Items) == 0 {
			return false, nil
		}
		u = &list.Items[0]
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: no %s in %s (last: %s): %w", what, gvr.GroupResource(), ns, last, err)
	}
	return u, nil
}

// completeCNPGBackup writes a CNPG Backup's status as CNPG writes it when
// barman finished: phase completed, where the data is, the WAL range.
func completeCNPGBackup(ctx context.Context, j *job, u *unstructured.Unstructured) error {
	if phase, _, _ := unstructured.NestedString(u.Object, "status", "phase"); phase == "completed" {
		return nil
	}
	cluster, _, _ := unstructured.NestedString(u.Object, "spec", "cluster", "name")
	now := time.Now().UTC().Format(time.RFC3339)
	id := time.Now().UTC().Format("20060102T150405")
	st := map[string]any{
		"phase": "completed", "method": "barmanObjectStore", "serverName": cluster,
		// The CNPG driver points each Cluster at its namespace's own path.
		"destinationPath": objectStorePath + "/" + u.GetNamespace(), "backupId": id, "backupName": "backup-" + id,
		"beginWal": "000000010000000000000002", "endWal": "000000010000000000000003",
		"beginLSN": "0/2000028", "endLSN": "0/3000060", "startedAt": now, "stoppedAt": now,
	}
	if m, ok, _ := unstructured.NestedString(u.Object, "spec", "method"); ok {
		st["method"] = m
	}
	return j.writeStatus(ctx, cnpgBackupGVR, u, st)
}

// completeCNPGCluster writes the restored Cluster's status as CNPG writes
// it once the recovered instance runs: healthy, every instance ready.
func completeCNPGCluster(ctx context.Context, j *job, u *unstructured.Unstructured) error {
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "instances")
	if n == 0 {
		n = 1
	}
	return j.writeStatus(ctx, cnpgClusterGVR, u, map[string]any{
		"phase": "Cluster in healthy state", "instances": n, "readyInstances": n,
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "ClusterIsReady", "message": "Cluster is Ready",
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}},
	})
}

// completeVelero writes a Velero Backup's or Restore's status as Velero
// writes it when done: the phase, timestamps and item counts.
func completeVelero(phase, doneField string) func(ctx context.Context, j *job, u *unstructured.Unstructured) error {
	return func(ctx context.Context, j *job, u *unstructured.Unstructured) error {
		if p, _, _ := unstructured.NestedString(u.Object, "status", "phase"); p == phase {
			return nil
		}
		now := time.Now().UTC().Format(time.RFC3339)
		gvr := veleroBackupGVR
		if u.GetKind() == "Restore" {
			gvr = veleroRestoreGVR
		}
		return j.writeStatus(ctx, gvr, u, map[string]any{
			"phase": phase, "startTimestamp": now, "completionTimestamp": now,
			"progress": map[string]any{"totalItems": int64(6), doneField: int64(6)},
		})
	}
}

// writeStatus replaces the status of u. CNPG's CRDs have a status
// subresource; Velero's have none (Velero updates the whole object), so
// its status goes with an update of the object, as Velero writes it.
func (j *job) writeStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, status map[string]any) error {
	r := j.dyn.Resource(gvr).Namespace(u.GetNamespace())
	cur, err := r.Get(ctx, u.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	cur.Object["status"] = status
	opts := metav1.UpdateOptions{FieldManager: string(fieldManager)}
	if gvr.Group == veleroBackupGVR.Group {
		_, err = r.Update(ctx, cur, opts)
	} else {
		_, err = r.UpdateStatus(ctx, cur, opts)
	}
	return err
}
