package restore_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/snapshot"
)

// snapshotRef writes, as the core's binder would, a snapshot ConfigMap of
// spec in ns and returns the reference to it; stored, when not nil,
// replaces the bytes written (a tampered copy).
func snapshotRef(t *testing.T, ns, app string, spec map[string]any, stored []byte) *backupsv1alpha1.SnapshotRef {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	values, digest, err := snapshot.Canonical(raw)
	if err != nil {
		t.Fatal(err)
	}
	name := snapshot.Name(app, digest)
	if stored == nil {
		stored = values
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{snapshot.LabelSnapshot: snapshot.LabelValues}},
		Data: map[string]string{snapshot.DataKey: string(stored)}}
	if err := c.Create(testContext(t), cm); err != nil {
		t.Fatal(err)
	}
	return &backupsv1alpha1.SnapshotRef{ReleaseName: prefix + app, ReleaseGeneration: 1, Digest: digest, Size: int64(len(values)), ConfigMapName: name}
}

// TestSnapshotByReference: a Backup carries only a
// reference to its application snapshot; a NewApplication restore reads
// the values from the snapshot ConfigMap, verified against the digest.
// A snapshot changed after it was written (here: a size of 900Gi where
// the Backup took 1Gi) fails the restore with SnapshotTampered, the
// message naming both digests, and nothing is created; a reference to a
// ConfigMap that is gone fails with SnapshotMissing.
func TestSnapshotByReference(t *testing.T) {
	start(t)
	registerDriver(t, "demo", true, []string{backupsv1alpha1.ProtocolVersion}, backupsv1alpha1.CapabilityRestoreToNew)
	createApp(t, alice, "refsrc", nil, map[string]any{"size": "1Gi"})
	spec := appSpec(t, alice, "refsrc")

	good := backupOf(t, alice, "ref-good", "refsrc", "demo", nil)
	good.Spec.ApplicationSnapshotRef = snapshotRef(t, alice, "refsrc", spec, nil)
	createBackup(t, good)
	job := newRestore(t, c, alice, "ref-good", "", "ref-good", "refcopy")
	waitCondition(t, job, backupsv1alpha1.ConditionDriverBound, metav1.ConditionTrue, backupsv1alpha1.ReasonBound)
	if d := cmp.Diff(spec, releaseValues(t, alice, "refcopy")); d != "" {
		t.Errorf("new application's values (-want the snapshot +got):\n%s", d)
	}

	tamperedSpec := map[string]any{}
	for k, v := range spec {
		tamperedSpec[k] = v
	}
	tamperedSpec["size"] = "900Gi"
	forged, _ := json.Marshal(tamperedSpec)
	bad := backupOf(t, alice, "ref-tampered", "refsrc", "demo", nil)
	spec2 := map[string]any{"size": "1Gi", "note": "tampered"}
	bad.Spec.ApplicationSnapshotRef = snapshotRef(t, alice, "refsrc", spec2, forged)
	createBackup(t, bad)
	job = newRestore(t, c, alice, "ref-tampered", "", "ref-tampered", "reftampered")
	got := waitCondition(t, job, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonSnapshotTampered)
	msg := conditionOf(got, backupsv1alpha1.ConditionReady).Message
	t.Logf("SnapshotTampered: %s", msg)
	for _, s := range []string{bad.Spec.ApplicationSnapshotRef.Digest, snapshot.Digest(forged), bad.Spec.ApplicationSnapshotRef.ConfigMapName, "tampering"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message lacks %q", s)
		}
	}
	if got.Status.Phase != backupsv1alpha1.PhaseFailed || getApp(t, alice, "reftampered") != nil {
		t.Errorf("phase %s, application reftampered %v: want Failed and none created", got.Status.Phase, getApp(t, alice, "reftampered"))
	}

	gone := backupOf(t, alice, "ref-gone", "refsrc", "demo", nil)
	gone.Spec.ApplicationSnapshotRef = &backupsv1alpha1.SnapshotRef{ReleaseName: prefix + "refsrc", Digest: snapshot.Digest([]byte(`{}`)), ConfigMapName: "snapshot-refsrc-nothere"}
	createBackup(t, gone)
	job = newRestore(t, c, alice, "ref-gone", "", "ref-gone", "refgone")
	got = waitCondition(t, job, backupsv1alpha1.ConditionReady, metav1.ConditionFalse, backupsv1alpha1.ReasonSnapshotMissing)
	if msg := conditionOf(got, backupsv1alpha1.ConditionReady).Message; !strings.Contains(msg, "snapshot-refsrc-nothere") {
		t.Errorf("SnapshotMissing message %q does not name the ConfigMap", msg)
	}
}
