package runbounds

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// ownedStatus returns exactly the status fields the manager's
// server-side apply entry of the status subresource names, with their
// current values: list-map entries by key (with their keys), set values,
// leaves whole; other managers' entries, its own entries of other
// operations or subresources, and fields it does not name are left out.
func TestOwnedStatus(t *testing.T) {
	lt := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	job := &backupsv1alpha1.BackupJob{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "core", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{
				"f:binding":{".":{},"f:driverRef":{".":{},"f:name":{},"f:protocolVersion":{}},"f:strategy":{"f:kind":{}}},
				"f:conditions":{"k:{\"type\":\"DriverBound\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{}},"k:{\"type\":\"Stalled\"}":{}},
				"f:phase":{},"f:backupName":{}}}`)}},
			{Manager: "core", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}},
			{Manager: "core", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:claim":{}}}`)}},
			{Manager: "backup-driver-x", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:claim":{},"f:conditions":{"k:{\"type\":\"Ready\"}":{}}}}`)}},
		}},
		Status: backupsv1alpha1.BackupJobStatus{JobStatus: backupsv1alpha1.JobStatus{
			Phase: backupsv1alpha1.PhaseRunning,
			Binding: &backupsv1alpha1.Binding{
				DriverRef: backupsv1alpha1.DriverRef{Name: "x", ProtocolVersion: "v1alpha1"},
				Strategy:  backupsv1alpha1.Strategy{Kind: "X"},
				BoundTime: lt,
			},
			Claim: &backupsv1alpha1.Claim{HolderIdentity: "x-0", LeaseDurationSeconds: 30},
			Conditions: []metav1.Condition{
				{Type: "Ready", Status: "False", Reason: "Progressing", Message: "driver's", LastTransitionTime: lt},
				{Type: "Stalled", Status: "True", Reason: "NoProgress", Message: "core's", LastTransitionTime: lt, ObservedGeneration: 2},
				{Type: "DriverBound", Status: "True", Reason: "Bound", Message: "not owned", LastTransitionTime: lt},
			},
		}},
	}
	got, err := ownedStatus(job, "core")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"phase": "Running",
		"binding": map[string]any{
			"driverRef": map[string]any{"name": "x", "protocolVersion": "v1alpha1"},
			"strategy":  map[string]any{"kind": "X"},
		},
		"conditions": []any{
			map[string]any{"type": "Stalled", "status": "True", "reason": "NoProgress", "message": "core's", "lastTransitionTime": "2026-01-02T03:04:05Z", "observedGeneration": int64(2)},
			map[string]any{"type": "DriverBound", "status": "True", "reason": "Bound"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ownedStatus (-want +got):\n%s", diff)
	}
	if got, _ := ownedStatus(job, "nobody"); len(got) != 0 {
		t.Errorf("a manager owning nothing got %v", got)
	}
}

// A set ("v:") keeps the owned values; an index ("i:") the owned
// position.
func TestExtractSets(t *testing.T) {
	fs := map[string]any{"f:s": map[string]any{`v:"a"`: map[string]any{}, `v:3`: map[string]any{}}, "f:l": map[string]any{"i:1": map[string]any{}}}
	v := map[string]any{"s": []any{"a", "b", int64(3)}, "l": []any{"x", "y"}, "other": true}
	want := map[string]any{"s": []any{"a", int64(3)}, "l": []any{"y"}}
	if diff := cmp.Diff(want, extract(fs, v)); diff != "" {
		t.Errorf("extract (-want +got):\n%s", diff)
	}
}
