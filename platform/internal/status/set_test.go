package status

import (
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// TestSetOwnsItsTypes: Set writes want with the object's generation,
// removes an owned type want lacks, leaves a type it does not own, and
// reports a change only when there is one.
func TestSetOwnsItsTypes(t *testing.T) {
	cv := &v1alpha1.ClusterValues{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	cv.Status.Conditions = []metav1.Condition{
		{Type: "Stalled", Status: metav1.ConditionTrue, Reason: "Stuck", Message: "m"},
		{Type: "Foreign", Status: metav1.ConditionTrue, Reason: "Theirs", Message: "m"},
	}
	owned := []string{"Ready", "Stalled"}
	ready := *conditions.TrueCondition("Ready", "Done", "all %d done", 2)
	if !Set(cv, owned, ready) {
		t.Fatal("first Set reported no change")
	}
	if Set(cv, owned, ready) {
		t.Error("the same Set again reported a change")
	}
	if c := conditions.Get(cv, "Ready"); c == nil || c.ObservedGeneration != 3 || c.Message != "all 2 done" || c.LastTransitionTime.IsZero() {
		t.Errorf("Ready = %+v, want observedGeneration 3, the message and a lastTransitionTime", c)
	}
	if conditions.Has(cv, "Stalled") {
		t.Error("owned Stalled was not removed")
	}
	if !conditions.Has(cv, "Foreign") {
		t.Error("Foreign, not owned, was removed")
	}
}
