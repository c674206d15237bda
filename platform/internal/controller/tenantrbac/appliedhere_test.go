package tenantrbac

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Only what this package applied is deleted: labels alone decide nothing.
func TestAppliedHere(t *testing.T) {
	sa := func(managers ...metav1.ManagedFieldsEntry) *corev1.ServiceAccount {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "cozy-installer-acme", ManagedFields: managers}}
	}
	for _, tc := range []struct {
		name string
		obj  *corev1.ServiceAccount
		want bool
	}{
		{"applied here", sa(metav1.ManagedFieldsEntry{Manager: FieldOwner, Operation: metav1.ManagedFieldsOperationApply}), true},
		{"applied here, finalizer dropped by a merge patch", sa(
			metav1.ManagedFieldsEntry{Manager: FieldOwner, Operation: metav1.ManagedFieldsOperationApply},
			metav1.ManagedFieldsEntry{Manager: "cozystack-controller-binary", Operation: metav1.ManagedFieldsOperationUpdate}), true},
		{"created by someone else with the labels", sa(metav1.ManagedFieldsEntry{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate}), false},
		{"an update under our name, not an apply", sa(metav1.ManagedFieldsEntry{Manager: FieldOwner, Operation: metav1.ManagedFieldsOperationUpdate}), false},
		{"no record", sa(), false},
	} {
		if got := appliedHere(tc.obj); got != tc.want {
			t.Errorf("%s: appliedHere = %v, want %v", tc.name, got, tc.want)
		}
	}
}
