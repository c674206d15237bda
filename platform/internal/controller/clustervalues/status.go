package clustervalues

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
)

// nsState is where one tenant namespace stands against the current
// generation of the source.
type nsState int

const (
	// nsProjected: its values objects hold the current document and carry
	// the current generation.
	nsProjected nsState = iota
	// nsLagging: a values object is missing, or holds another generation or
	// content; the namespace reconciler has not caught up yet.
	nsLagging
	// nsInvalid: its `_namespace` values are invalid (e.g. no host), so
	// nothing is written there, or its releases read an object that is not
	// kept current (the legacy Secret with --legacy-secret=off); a person
	// must fix its labels or annotations.
	nsInvalid
	// nsFailed: the last write into it failed; it is retried with backoff.
	nsFailed
)

// nsStatus is one tenant namespace's state.
type nsStatus struct {
	name  string
	state nsState
	// carried is the oldest generation its values objects carry, 0 when
	// one is missing.
	carried int64
	// reason explains nsInvalid and nsFailed.
	reason string
}

// summary aggregates the namespaces for one generation.
type summary struct {
	generation       int64
	total, projected int32
	// lag is generation minus the oldest carried generation (0 when there
	// are no namespaces).
	lag                      int64
	lagging, invalid, failed []nsStatus
}

// summarize aggregates nss (in any order) for generation. Lists are sorted
// by namespace name.
func summarize(generation int64, nss []nsStatus) summary {
	s := summary{generation: generation, total: int32(len(nss))}
	oldest := generation
	for _, ns := range nss {
		oldest = min(oldest, ns.carried)
		switch ns.state {
		case nsProjected:
			s.projected++
		case nsLagging:
			s.lagging = append(s.lagging, ns)
		case nsInvalid:
			s.invalid = append(s.invalid, ns)
		case nsFailed:
			s.failed = append(s.failed, ns)
		}
	}
	s.lag = generation - oldest
	for _, l := range [][]nsStatus{s.lagging, s.invalid, s.failed} {
		slices.SortFunc(l, func(a, b nsStatus) int { return strings.Compare(a.name, b.name) })
	}
	return s
}

// converged reports whether every tenant namespace is projected.
func (s summary) converged() bool { return s.projected == s.total }

// maxListed bounds the namespaces a condition message names.
const maxListed = 5

// conditions returns the conditions summary s calls for: Projected and
// Ready always, Reconciling while namespaces lag, Stalled while some cannot
// progress (invalid values, failing writes). Reconciling and Stalled are
// absent otherwise (kstatus: abnormal-true conditions are removed when
// false).
func (s summary) conditions() []metav1.Condition {
	gen := s.generation
	var projected metav1.Condition
	switch {
	case s.total == 0:
		projected = *conditions.TrueCondition(v1alpha1.ConditionProjected, v1alpha1.ReasonNoTenantNamespaces,
			"no tenant namespace exists (none is labelled %s)", v1alpha1.LabelTenant)
	case s.converged():
		projected = *conditions.TrueCondition(v1alpha1.ConditionProjected, v1alpha1.ReasonProjected,
			"generation %d is projected into all %d tenant namespaces", gen, s.total)
	case len(s.invalid) > 0:
		projected = *conditions.FalseCondition(v1alpha1.ConditionProjected, v1alpha1.ReasonInvalidNamespaceValues,
			"%d/%d tenant namespaces carry generation %d; %d cannot be projected until their labels or annotations are fixed: %s",
			s.projected, s.total, gen, len(s.invalid), listReasons(s.invalid))
	case len(s.failed) > 0:
		projected = *conditions.FalseCondition(v1alpha1.ConditionProjected, v1alpha1.ReasonWriteFailed,
			"%d/%d tenant namespaces carry generation %d; writes keep failing in %d (retrying; check the controller's permissions and the API server): %s",
			s.projected, s.total, gen, len(s.failed), listReasons(s.failed))
	default:
		projected = *conditions.FalseCondition(v1alpha1.ConditionProjected, v1alpha1.ReasonProjectionInProgress,
			"%d/%d tenant namespaces carry generation %d; waiting for %s",
			s.projected, s.total, gen, listNames(s.lagging))
	}
	ready := projected
	ready.Type = v1alpha1.ConditionReady
	conds := []metav1.Condition{ready, projected}
	if len(s.lagging) > 0 {
		conds = append(conds, *conditions.TrueCondition(v1alpha1.ConditionReconciling, v1alpha1.ReasonProjectionInProgress,
			"projecting generation %d: %d tenant namespaces to go", gen, len(s.lagging)))
	}
	if projected.Reason == v1alpha1.ReasonInvalidNamespaceValues || projected.Reason == v1alpha1.ReasonWriteFailed {
		stalled := projected
		stalled.Type, stalled.Status = v1alpha1.ConditionStalled, metav1.ConditionTrue
		conds = append(conds, stalled)
	}
	return conds
}

// invalidSpecConditions are the conditions of a generation whose spec does
// not render into a valid document (cause says why).
func invalidSpecConditions(generation int64, cause error) []metav1.Condition {
	msg := fmt.Sprintf("generation %d cannot be projected, so nothing is written (tenant namespaces keep the values they have): %v", generation, cause)
	return []metav1.Condition{
		*conditions.FalseCondition(v1alpha1.ConditionReady, v1alpha1.ReasonInvalidSpec, "%s", msg),
		*conditions.FalseCondition(v1alpha1.ConditionProjected, v1alpha1.ReasonInvalidSpec, "%s", msg),
		*conditions.TrueCondition(v1alpha1.ConditionStalled, v1alpha1.ReasonInvalidSpec, "%s", msg),
	}
}

// ownedConditions are the condition types the projection writes.
var ownedConditions = []string{v1alpha1.ConditionReady, v1alpha1.ConditionProjected, v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled}

func listNames(nss []nsStatus) string {
	names := make([]string, 0, maxListed)
	for i, ns := range nss {
		if i == maxListed {
			names = append(names, fmt.Sprintf("and %d more", len(nss)-maxListed))
			break
		}
		names = append(names, ns.name)
	}
	return strings.Join(names, ", ")
}

func listReasons(nss []nsStatus) string {
	parts := make([]string, 0, maxListed)
	for i, ns := range nss {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("and %d more", len(nss)-maxListed))
			break
		}
		parts = append(parts, ns.name+": "+ns.reason)
	}
	return strings.Join(parts, "; ")
}
