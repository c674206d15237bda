package binder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/platform/internal/backup/backuptest"
	"cozystack.io/platform/internal/backup/binder"
	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/snapshot"
)

// bigValues is a VMInstance-like spec of about 1 MB: a 1,000,000-character
// cloudInit.
func bigValues(size string) string {
	return `{"size":"` + size + `","cloudInit":"#cloud-config\n` + strings.Repeat("x", 1_000_000) + `"}`
}

// snapshotConfigMaps lists the snapshot ConfigMaps of role in ns.
func snapshotConfigMaps(t *testing.T, ns, role string) []corev1.ConfigMap {
	t.Helper()
	var list corev1.ConfigMapList
	if err := c.List(backuptest.Context(t), &list, client.InNamespace(ns), client.MatchingLabels{snapshot.LabelSnapshot: role}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// storedBytes is the size of j as the API server returns it (JSON).
func storedBytes(t *testing.T, j *backupsv1alpha1.BackupJob) int {
	t.Helper()
	raw, err := json.Marshal(getJob(t, j))
	if err != nil {
		t.Fatal(err)
	}
	return len(raw)
}

// TestSnapshotByReference: five BackupJobs of a 1 MB
// application each carry a reference of a few hundred bytes (release,
// generation, digest, ConfigMap), never the values; the five share one
// snapshot ConfigMap holding the values once, owned through its owners
// ConfigMap by the five jobs and then by a Backup; a changed application
// gets a snapshot of its own; a snapshot ConfigMap changed after it was
// written is never reused (SnapshotFailed naming both digests); and the
// snapshot goes with the last job or Backup using it.
func TestSnapshotByReference(t *testing.T) {
	need(t)
	startBinder(t, binder.Options{Resync: 200 * time.Millisecond})
	ns := backuptest.TempNamespace(t, c, "binder-snapshot-")
	now := time.Now()
	backuptest.RegisterDriver(t, c, "bn-snapshot", []string{"BnSnapshot"}, v1, now, 3600)
	class(t, "bn-snapshot", "VMInstance", "BnSnapshot", nil)
	hr := backuptest.Application(t, c, ns, "VMInstance", "vm", bigValues("10Gi"))

	bound := expect{status: metav1.ConditionTrue, reason: backupsv1alpha1.ReasonBound, phase: backupsv1alpha1.PhasePending}
	var jobs []*backupsv1alpha1.BackupJob
	for i := range 5 {
		j := backupJob(t, ns, fmt.Sprintf("vm-%d", i), "VMInstance", "vm", "bn-snapshot")
		jobs = append(jobs, waitFor(t, j, bound))
	}
	var name string
	for _, j := range jobs {
		if j.Status.ApplicationSnapshot != nil {
			t.Errorf("%s: status.applicationSnapshot holds %d bytes of values; want a reference only", j.Name, len(j.Status.ApplicationSnapshot.Raw))
		}
		ref := j.Status.ApplicationSnapshotRef
		if ref == nil {
			t.Fatalf("%s: no status.applicationSnapshotRef", j.Name)
		}
		if ref.ReleaseName != hr.Name || ref.ReleaseGeneration != 1 || !strings.HasPrefix(ref.Digest, "sha256:") || ref.Size < 1_000_000 {
			t.Errorf("%s: reference %+v, want release %s generation 1, a sha256 digest and the values' size", j.Name, ref, hr.Name)
		}
		if n := storedBytes(t, j); n > 10_000 {
			t.Errorf("%s: the stored BackupJob is %d bytes, want under 10,000 for a 1 MB application", j.Name, n)
		}
		if name == "" {
			name = ref.ConfigMapName
		} else if ref.ConfigMapName != name {
			t.Errorf("%s: snapshot %s, want the one the first job made, %s", j.Name, ref.ConfigMapName, name)
		}
		got, err := snapshot.ForJob(backuptest.Context(t), c, j)
		if err != nil || got == nil || !jsonEqual(got, bigValues("10Gi")) {
			t.Errorf("%s: the snapshot does not resolve to the application's values (error %v)", j.Name, err)
		}
	}
	values := snapshotConfigMaps(t, ns, snapshot.LabelValues)
	owners := snapshotConfigMaps(t, ns, snapshot.LabelOwners)
	if len(values) != 1 || len(owners) != 1 {
		t.Fatalf("%d values and %d owners ConfigMaps, want one of each for five jobs of one application", len(values), len(owners))
	}
	if len(owners[0].OwnerReferences) != 5 {
		t.Errorf("owners ConfigMap has %d ownerReferences, want the five jobs: %+v", len(owners[0].OwnerReferences), owners[0].OwnerReferences)
	}
	if o := values[0].OwnerReferences; len(o) != 1 || o[0].UID != owners[0].UID {
		t.Errorf("values ConfigMap owners %+v, want the owners ConfigMap only", o)
	}

	// A changed application is a new digest: a snapshot of its own.
	hr = getRelease(t, hr)
	hr.Spec.Values.Raw = []byte(bigValues("20Gi"))
	if err := c.Update(backuptest.Context(t), hr); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the binder reads the release from its cache
	changed := waitFor(t, backupJob(t, ns, "vm-changed", "VMInstance", "vm", "bn-snapshot"), bound)
	if ref := changed.Status.ApplicationSnapshotRef; ref == nil || ref.ConfigMapName == name || ref.ReleaseGeneration != 2 {
		t.Errorf("the changed application's reference %+v, want another snapshot than %s at generation 2", ref, name)
	}

	// Tampering: the snapshot of the 20Gi values replaced by other bytes
	// (it is immutable: deleted and made again, as its owner).
	ref := changed.Status.ApplicationSnapshotRef
	cm := &corev1.ConfigMap{}
	if err := c.Get(backuptest.Context(t), client.ObjectKey{Namespace: ns, Name: ref.ConfigMapName}, cm); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(backuptest.Context(t), cm); err != nil {
		t.Fatal(err)
	}
	forged := `{"size":"900Gi"}`
	cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ref.ConfigMapName, Labels: cm.Labels, OwnerReferences: cm.OwnerReferences},
		Data: map[string]string{snapshot.DataKey: forged}}
	if err := c.Create(backuptest.Context(t), cm); err != nil {
		t.Fatal(err)
	}
	failed := waitFor(t, backupJob(t, ns, "vm-tampered", "VMInstance", "vm", "bn-snapshot"), expect{
		status: metav1.ConditionFalse, reason: backupsv1alpha1.ReasonSnapshotFailed, phase: backupsv1alpha1.PhaseFailed,
		message: []string{ref.Digest, snapshot.Digest([]byte(forged)), ref.ConfigMapName, "tampering"}})
	checkFailed(backupsv1alpha1.ReasonSnapshotFailed)(t, failed)

	// A ConfigMap not the core's under the snapshot's owners name (only
	// cluster operators and installers write ConfigMaps) fails the job
	// rather than being adopted.
	backuptest.Application(t, c, ns, "VMInstance", "squat", `{"size":"1Gi"}`)
	_, squatDigest, _ := snapshot.Canonical([]byte(`{"size":"1Gi"}`))
	squat := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: snapshot.OwnersName(snapshot.Name("squat", squatDigest))}}
	if err := c.Create(backuptest.Context(t), squat); err != nil {
		t.Fatal(err)
	}
	waitFor(t, backupJob(t, ns, "squat", "VMInstance", "squat", "bn-snapshot"), expect{
		status: metav1.ConditionFalse, reason: backupsv1alpha1.ReasonSnapshotFailed, phase: backupsv1alpha1.PhaseFailed,
		message: []string{squat.Name, "is not the backup core's"}})

	// A Backup of the first job becomes an owner; the snapshot outlives
	// the jobs and goes with the Backup.
	b := &backupsv1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: jobs[0].Name}, Spec: backupsv1alpha1.BackupSpec{
		ApplicationRef: jobs[0].Spec.ApplicationRef, DriverRef: jobs[0].Status.Binding.DriverRef, Strategy: jobs[0].Status.Binding.Strategy,
		BackupJobName: jobs[0].Name, TakenAt: metav1.Now(), ApplicationSnapshotRef: jobs[0].Status.ApplicationSnapshotRef}}
	if err := c.Create(backuptest.Context(t), b); err != nil {
		t.Fatal(err)
	}
	ownersKey := client.ObjectKey{Namespace: ns, Name: snapshot.OwnersName(name)}
	backuptest.Eventually(t, 30*time.Second, "the Backup among the snapshot's owners", func() error {
		o := &corev1.ConfigMap{}
		if err := c.Get(backuptest.Context(t), ownersKey, o); err != nil {
			return err
		}
		for _, r := range o.OwnerReferences {
			if r.Kind == "Backup" && r.UID == b.UID {
				return nil
			}
		}
		return fmt.Errorf("owners %+v", o.OwnerReferences)
	})
	for _, j := range jobs {
		if err := c.Delete(backuptest.Context(t), j); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(3 * time.Second) // the garbage collector's turn
	if _, err := snapshot.ForBackup(backuptest.Context(t), c, b); err != nil {
		t.Errorf("after its jobs were deleted, the Backup's snapshot: %v; want it kept while the Backup exists", err)
	}
	if err := c.Delete(backuptest.Context(t), b); err != nil {
		t.Fatal(err)
	}
	backuptest.Eventually(t, 60*time.Second, "the snapshot gone with its last Backup", func() error {
		for _, key := range []client.ObjectKey{ownersKey, {Namespace: ns, Name: name}} {
			err := c.Get(backuptest.Context(t), key, &corev1.ConfigMap{})
			if err == nil {
				return fmt.Errorf("ConfigMap %s still exists", key.Name)
			}
			if !apierrors.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
}

func getRelease[T client.Object](t *testing.T, o T) T {
	t.Helper()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
		t.Fatal(err)
	}
	return o
}
