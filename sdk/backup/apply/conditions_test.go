package apply

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestConditionsKeepTransitionWhileStatusStays: lastTransitionTime moves
// only with the status; reason, message and observedGeneration are the
// new ones; conditions of old the writer no longer sends are not returned.
func TestConditionsKeepTransitionWhileStatusStays(t *testing.T) {
	then := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := then.Add(time.Hour)
	old := []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Waiting", Message: "a", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(then)},
		{Type: "Stalled", Status: metav1.ConditionTrue, Reason: "Stuck", Message: "b", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(then)},
		{Type: "Other", Status: metav1.ConditionTrue, Reason: "Theirs", LastTransitionTime: metav1.NewTime(then)},
	}
	got := Conditions(old, now,
		Condition("Stalled", metav1.ConditionFalse, "Unstuck", 2, "fixed %d", 1),
		Condition("Ready", metav1.ConditionFalse, "StillWaiting", 2, "b"),
		Condition("Reconciling", metav1.ConditionTrue, "Working", 2, "c"),
	)
	want := []metav1.Condition{
		{Type: "Stalled", Status: metav1.ConditionFalse, Reason: "Unstuck", Message: "fixed 1", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now)},
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "StillWaiting", Message: "b", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(then)},
		{Type: "Reconciling", Status: metav1.ConditionTrue, Reason: "Working", Message: "c", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now)},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d conditions %+v, want %+v", len(got), got, want)
	}
	for i := range want {
		if !got[i].LastTransitionTime.Equal(&want[i].LastTransitionTime) || got[i].Type != want[i].Type || got[i].Status != want[i].Status ||
			got[i].Reason != want[i].Reason || got[i].Message != want[i].Message || got[i].ObservedGeneration != want[i].ObservedGeneration {
			t.Errorf("condition %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if old[0].Reason != "Waiting" {
		t.Errorf("old was changed: %+v", old[0])
	}
	if Conditions(old, now) != nil {
		t.Error("no condition wanted: want nil")
	}
}

// TestConditionsKeepsACarriedTransition: a condition sent as it was read
// (its own lastTransitionTime) keeps it.
func TestConditionsKeepsACarriedTransition(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	carried := metav1.Condition{Type: "Retention", Status: metav1.ConditionTrue, Reason: "Applied", ObservedGeneration: 1, LastTransitionTime: then}
	got := Conditions(nil, then.Add(time.Hour), carried)
	if !got[0].LastTransitionTime.Equal(&then) {
		t.Errorf("lastTransitionTime %v, want %v", got[0].LastTransitionTime, then)
	}
}

func TestOwned(t *testing.T) {
	conds := []metav1.Condition{{Type: "A"}, {Type: "B"}, {Type: "C"}}
	got := Owned(conds, "C", "X", "A")
	if len(got) != 2 || got[0].Type != "C" || got[1].Type != "A" {
		t.Errorf("Owned = %+v, want C, A", got)
	}
}
