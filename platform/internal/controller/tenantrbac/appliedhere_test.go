package tenantrbac

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// Only what this package applied is deleted: labels alone decide nothing.
func TestAppliedHere(t *testing.T) {
	sa := func(managers ...metav1.ManagedFieldsEntry) *corev1.ServiceAccount {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "cozy-installer-acme", ManagedFields: managers}}
	}
	applied := metav1.ManagedFieldsEntry{Manager: v1alpha1.FieldManagerController, Operation: metav1.ManagedFieldsOperationApply}
	for _, tc := range []struct {
		name   string
		reason string
		obj    *corev1.ServiceAccount
		want   bool
	}{
		{
			name:   "applied here",
			reason: "a server-side apply as cozystack-controller is what marks an object as this package's",
			obj:    sa(applied),
			want:   true,
		},
		{
			name:   "applied here, finalizer dropped by a merge patch",
			reason: "a later update by another manager does not take the object away",
			obj: sa(applied,
				metav1.ManagedFieldsEntry{Manager: "cozystack-controller-binary", Operation: metav1.ManagedFieldsOperationUpdate}),
			want: true,
		},
		{
			name:   "created by someone else with the labels",
			reason: "the labels only select: an object a tenant labelled alike is never deleted",
			obj:    sa(metav1.ManagedFieldsEntry{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate}),
			want:   false,
		},
		{
			name:   "an update under our name, not an apply",
			reason: "anyone may send an update with our manager name; only an apply is this package's write",
			obj:    sa(metav1.ManagedFieldsEntry{Manager: v1alpha1.FieldManagerController, Operation: metav1.ManagedFieldsOperationUpdate}),
			want:   false,
		},
		{
			name:   "no record",
			reason: "nothing records who wrote it, so nothing proves it is this package's",
			obj:    sa(),
			want:   false,
		},
	} {
		if got := appliedHere(tc.obj); got != tc.want {
			t.Errorf("%s (%s): appliedHere = %v, want %v", tc.name, tc.reason, got, tc.want)
		}
	}
}
