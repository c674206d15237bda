package clustervalues

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/status"
)

// TestSummaryConditions is the status computation over a table of
// namespace states.
func TestSummaryConditions(t *testing.T) {
	type want struct {
		total, projected int32
		lag              int64
		ready, proj      metav1.ConditionStatus
		reason           string
		reconciling      bool
		stalled          bool
		message          []string // fragments of the Projected message
	}
	for _, tc := range []struct {
		name string
		nss  []nsStatus
		want want
	}{
		{
			name: "no tenant namespaces",
			want: want{ready: "True", proj: "True", reason: v1alpha1.ReasonNoTenantNamespaces, message: []string{v1alpha1.LabelTenant}},
		},
		{
			name: "all projected",
			nss:  []nsStatus{{name: "a", carried: 4}, {name: "b", carried: 4}},
			want: want{total: 2, projected: 2, ready: "True", proj: "True", reason: v1alpha1.ReasonProjected,
				message: []string{"generation 4", "all 2"}},
		},
		{
			name: "one namespace has no ConfigMap yet",
			nss:  []nsStatus{{name: "a", carried: 4}, {name: "new", state: nsLagging}},
			want: want{total: 2, projected: 1, lag: 4, ready: "False", proj: "False", reason: v1alpha1.ReasonProjectionInProgress,
				reconciling: true, message: []string{"1/2", "generation 4", "waiting for new"}},
		},
		{
			name: "one namespace carries the previous generation",
			nss:  []nsStatus{{name: "b", state: nsLagging, carried: 3}, {name: "a", carried: 4}},
			want: want{total: 2, projected: 1, lag: 1, ready: "False", proj: "False", reason: v1alpha1.ReasonProjectionInProgress,
				reconciling: true, message: []string{"waiting for b"}},
		},
		{
			name: "invalid namespace wins over lagging",
			nss: []nsStatus{{name: "a", carried: 4}, {name: "lag", state: nsLagging, carried: 3},
				{name: "nohost", state: nsInvalid, reason: "the namespace has no host"}},
			want: want{total: 3, projected: 1, lag: 4, ready: "False", proj: "False", reason: v1alpha1.ReasonInvalidNamespaceValues,
				reconciling: true, stalled: true, message: []string{"1/3", "nohost: the namespace has no host"}},
		},
		{
			name: "failing writes",
			nss:  []nsStatus{{name: "a", carried: 4}, {name: "quota", state: nsFailed, reason: "forbidden"}},
			want: want{total: 2, projected: 1, lag: 4, ready: "False", proj: "False", reason: v1alpha1.ReasonWriteFailed,
				stalled: true, message: []string{"quota: forbidden"}},
		},
		{
			name: "many lagging are elided",
			nss: []nsStatus{{name: "n1", state: nsLagging}, {name: "n2", state: nsLagging}, {name: "n3", state: nsLagging},
				{name: "n4", state: nsLagging}, {name: "n5", state: nsLagging}, {name: "n6", state: nsLagging}, {name: "n7", state: nsLagging}},
			want: want{total: 7, lag: 4, ready: "False", proj: "False", reason: v1alpha1.ReasonProjectionInProgress,
				reconciling: true, message: []string{"n1, n2, n3, n4, n5, and 2 more"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := summarize(4, tc.nss)
			if s.total != tc.want.total || s.projected != tc.want.projected || s.lag != tc.want.lag {
				t.Errorf("total/projected/lag = %d/%d/%d, want %d/%d/%d", s.total, s.projected, s.lag, tc.want.total, tc.want.projected, tc.want.lag)
			}
			// As the reconciler stores them: observedGeneration is the
			// source's.
			cv := &v1alpha1.ClusterValues{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
			status.Set(cv, ownedConditions, s.conditions()...)
			conds := cv.Status.Conditions
			ready := apimeta.FindStatusCondition(conds, v1alpha1.ConditionReady)
			proj := apimeta.FindStatusCondition(conds, v1alpha1.ConditionProjected)
			if ready == nil || proj == nil {
				t.Fatalf("conditions %v lack Ready or Projected", conds)
			}
			if ready.Status != tc.want.ready || proj.Status != tc.want.proj || proj.Reason != tc.want.reason || ready.Reason != proj.Reason {
				t.Errorf("Ready=%s/%s Projected=%s/%s, want Ready=%s Projected=%s reason %s",
					ready.Status, ready.Reason, proj.Status, proj.Reason, tc.want.ready, tc.want.proj, tc.want.reason)
			}
			for _, c := range conds {
				if c.ObservedGeneration != 4 {
					t.Errorf("%s.observedGeneration = %d, want 4", c.Type, c.ObservedGeneration)
				}
			}
			if got := apimeta.IsStatusConditionTrue(conds, v1alpha1.ConditionReconciling); got != tc.want.reconciling {
				t.Errorf("Reconciling=%v, want %v", got, tc.want.reconciling)
			}
			if got := apimeta.IsStatusConditionTrue(conds, v1alpha1.ConditionStalled); got != tc.want.stalled {
				t.Errorf("Stalled=%v, want %v", got, tc.want.stalled)
			}
			for _, frag := range tc.want.message {
				if !strings.Contains(proj.Message, frag) {
					t.Errorf("Projected message %q lacks %q", proj.Message, frag)
				}
			}
		})
	}
}

func TestInvalidSpecConditions(t *testing.T) {
	conds := invalidSpecConditions(7, errors.New("at /root-host: minLength"))
	for _, typ := range []string{v1alpha1.ConditionReady, v1alpha1.ConditionProjected} {
		c := apimeta.FindStatusCondition(conds, typ)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonInvalidSpec || !strings.Contains(c.Message, "root-host") {
			t.Errorf("%s = %+v, want False/InvalidSpec naming root-host", typ, c)
		}
	}
	if !apimeta.IsStatusConditionTrue(conds, v1alpha1.ConditionStalled) {
		t.Error("Stalled is not True")
	}
}

// TestApplyConditions keeps transition times of unchanged statuses and
// removes Reconciling and Stalled once they no longer apply.
func TestApplyConditions(t *testing.T) {
	lagging := summarize(2, []nsStatus{{name: "a", state: nsLagging, carried: 1}}).conditions()
	cv := &v1alpha1.ClusterValues{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	if !status.Set(cv, ownedConditions, lagging...) {
		t.Fatal("first apply reported no change")
	}
	if status.Set(cv, ownedConditions, lagging...) {
		t.Error("re-applying the same conditions reported a change")
	}
	before := apimeta.FindStatusCondition(cv.Status.Conditions, v1alpha1.ConditionReady).LastTransitionTime
	time.Sleep(1100 * time.Millisecond) // transition times have second precision
	done := summarize(2, []nsStatus{{name: "a", carried: 2}}).conditions()
	if !status.Set(cv, ownedConditions, done...) {
		t.Fatal("converging reported no change")
	}
	if apimeta.FindStatusCondition(cv.Status.Conditions, v1alpha1.ConditionReconciling) != nil {
		t.Error("Reconciling was not removed")
	}
	if after := apimeta.FindStatusCondition(cv.Status.Conditions, v1alpha1.ConditionReady).LastTransitionTime; !after.After(before.Time) {
		t.Errorf("Ready flipped but lastTransitionTime stayed %v", after)
	}
	got := make([]string, 0, len(cv.Status.Conditions))
	for _, c := range cv.Status.Conditions {
		got = append(got, c.Type+"="+string(c.Status))
	}
	if diff := cmp.Diff([]string{"Ready=True", "Projected=True"}, got); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}
