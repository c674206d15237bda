package apply

import (
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition returns a condition of type typ with status, reason,
// observedGeneration generation and the message format makes of args; its
// lastTransitionTime is left for Conditions to set.
func Condition(typ string, status metav1.ConditionStatus, reason string, generation int64, format string, args ...any) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, ObservedGeneration: generation, Message: fmt.Sprintf(format, args...)}
}

// Conditions returns want, in its order, as a writer of a shared object
// sends them: each keeps the lastTransitionTime of its type in old (what
// the object holds) while its status stays, and gets now when the status
// changes or old has none, unless it carries a lastTransitionTime of its
// own (metav1.Condition's rule, applied by apimeta.SetStatusCondition).
// Conditions of old not in want are left out: a writer sends all it owns
// every time (Status). No want, nil.
func Conditions(old []metav1.Condition, now time.Time, want ...metav1.Condition) []metav1.Condition {
	if len(want) == 0 {
		return nil
	}
	out := make([]metav1.Condition, 0, len(want))
	for _, c := range want {
		one := make([]metav1.Condition, 0, 1)
		if prev := apimeta.FindStatusCondition(old, c.Type); prev != nil && !prev.LastTransitionTime.IsZero() {
			one = append(one, *prev)
		}
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		apimeta.SetStatusCondition(&one, c)
		out = append(out, one[0])
	}
	return out
}

// Owned returns the conditions of conds whose type is one of types, in
// the order of types: the share of a shared object's conditions one writer
// owns.
func Owned(conds []metav1.Condition, types ...string) []metav1.Condition {
	var out []metav1.Condition
	for _, t := range types {
		if c := apimeta.FindStatusCondition(conds, t); c != nil {
			out = append(out, *c)
		}
	}
	return out
}
