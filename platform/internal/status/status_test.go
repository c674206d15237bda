package status

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

func TestApplyFollowsKstatus(t *testing.T) {
	obj := &v1alpha1.PackageSource{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	check := func(step string, ready metav1.ConditionStatus, reconciling, stalled bool) {
		t.Helper()
		conds := obj.Status.Conditions
		r := meta.FindStatusCondition(conds, v1alpha1.ConditionReady)
		if r == nil || r.Status != ready || r.ObservedGeneration != 3 {
			t.Errorf("%s: Ready = %+v, want %s at generation 3", step, r, ready)
		}
		if got := meta.IsStatusConditionTrue(conds, v1alpha1.ConditionReconciling); got != reconciling {
			t.Errorf("%s: Reconciling=%v, want %v", step, got, reconciling)
		}
		if got := meta.IsStatusConditionTrue(conds, v1alpha1.ConditionStalled); got != stalled {
			t.Errorf("%s: Stalled=%v, want %v", step, got, stalled)
		}
		if len(conds) != 1+btoi(reconciling)+btoi(stalled) {
			t.Errorf("%s: %d conditions, want only the true ones besides Ready: %+v", step, len(conds), conds)
		}
	}
	Apply(obj, Result{StateProgressing, v1alpha1.ReasonProgressing, "pulling"})
	check("progressing", metav1.ConditionFalse, true, false)
	Apply(obj, Result{StateStalled, v1alpha1.ReasonDigestMismatch, "digest mismatch"})
	check("stalled", metav1.ConditionFalse, false, true)
	if c := meta.FindStatusCondition(obj.Status.Conditions, v1alpha1.ConditionStalled); c.Reason != v1alpha1.ReasonDigestMismatch {
		t.Errorf("Stalled reason %q", c.Reason)
	}
	Apply(obj, Result{StateReady, v1alpha1.ReasonArtifactReady, "serving"})
	check("ready", metav1.ConditionTrue, false, false)
}

func TestChanged(t *testing.T) {
	obj := &v1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	r := Result{StateReady, "A", "m"}
	if !Changed(obj, r) {
		t.Error("no condition yet: want changed")
	}
	Apply(obj, r)
	if Changed(obj, r) {
		t.Error("same result: want unchanged")
	}
	if !Changed(obj, Result{StateReady, "A", "other"}) || !Changed(obj, Result{StateStalled, "A", "m"}) {
		t.Error("different message or status: want changed")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
