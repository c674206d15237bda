package status

import (
	"context"
	"fmt"
	"slices"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
)

// State says which of the three kstatus states a result is.
type State int

const (
	// StateReady: Ready=True; Reconciling and Stalled removed.
	StateReady State = iota
	// StateProgressing: Ready=False, Reconciling=True (still working, or
	// retrying a transient failure); Stalled removed.
	StateProgressing
	// StateStalled: Ready=False, Stalled=True; Reconciling removed. The
	// operator still retries on change and at its interval.
	StateStalled
)

// Result is one reconcile's verdict on an object: its summary.
type Result struct {
	State State
	// Reason is the CamelCase reason of the Ready condition (and of
	// Reconciling or Stalled).
	Reason string
	// Message says what happened and, when not Ready, what to do.
	Message string
}

// Owned are the condition types Write owns: it sets or removes each.
var Owned = []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}

// Apply sets r's conditions on obj for its generation.
func Apply(obj conditions.Setter, r Result) {
	switch r.State {
	case StateReady:
		conditions.MarkTrue(obj, meta.ReadyCondition, r.Reason, "%s", r.Message)
		conditions.Delete(obj, meta.ReconcilingCondition)
		conditions.Delete(obj, meta.StalledCondition)
	case StateProgressing:
		conditions.MarkFalse(obj, meta.ReadyCondition, r.Reason, "%s", r.Message)
		conditions.MarkReconciling(obj, r.Reason, "%s", r.Message)
		conditions.Delete(obj, meta.StalledCondition)
	case StateStalled:
		conditions.MarkFalse(obj, meta.ReadyCondition, r.Reason, "%s", r.Message)
		conditions.MarkStalled(obj, r.Reason, "%s", r.Message)
		conditions.Delete(obj, meta.ReconcilingCondition)
	}
}

// Set is Apply for a summary of several conditions rather than one
// Result: it sets each condition of want on obj with fluxcd/pkg/runtime's
// conditions (observedGeneration becomes obj's generation;
// lastTransitionTime moves when the status, reason or message changes),
// removes each type of owned that want lacks, and reports whether obj's
// conditions changed.
func Set(obj conditions.Setter, owned []string, want ...metav1.Condition) bool {
	before := slices.Clone(obj.GetConditions())
	for i := range want {
		conditions.Set(obj, &want[i])
	}
	for _, t := range owned {
		if !slices.ContainsFunc(want, func(c metav1.Condition) bool { return c.Type == t }) {
			conditions.Delete(obj, t)
		}
	}
	return !equality.Semantic.DeepEqual(before, obj.GetConditions())
}

// Changed reports whether applying r to obj would change its Ready
// condition's status, reason or message (so an event is due).
func Changed(obj conditions.Getter, r Result) bool {
	c := conditions.Get(obj, meta.ReadyCondition)
	want := metav1.ConditionFalse
	if r.State == StateReady {
		want = metav1.ConditionTrue
	}
	return c == nil || c.Status != want || c.Reason != r.Reason || c.Message != r.Message
}

// Writer writes the status of one kind's objects.
type Writer struct {
	// Recorder receives one event per change of Ready (nil: none):
	// Normal when it becomes Ready, Warning otherwise.
	Recorder events.EventRecorder
	// Action names what the reconciler does in events ("Pull", "Install").
	Action string
	// FieldOwner is the manager name of the status patches.
	FieldOwner string
}

// Write emits the event r calls for, applies r to obj and patches obj's
// status (and whatever else of obj changed since patcher last patched it).
// fluxcd's patch helper sends the conditions, then the rest of the status
// with observedGeneration, in two requests: a reader that needs a status
// field with a condition waits for both, not for the condition alone.
// Errors are the API's, wrapped.
//
// A message over MaxMessage is stored shortened (Shorten); the events
// carry all of it, in notes of at most MaxNote bytes.
func (w Writer) Write(ctx context.Context, patcher *patch.SerialPatcher, obj conditions.Setter, r Result) error {
	full := r.Message
	r.Message = Shorten(full)
	if w.Recorder != nil && Changed(obj, r) {
		typ := corev1.EventTypeWarning
		if r.State == StateReady {
			typ = corev1.EventTypeNormal
		}
		parts := eventParts(full)
		for i, note := range parts {
			// The events API folds events of one object, type, action and
			// reason into one series whatever their notes (client-go
			// tools/events, getKey): each part has its own action.
			action := w.Action
			if len(parts) > 1 {
				action = fmt.Sprintf("%s %d/%d", w.Action, i+1, len(parts))
			}
			w.Recorder.Eventf(obj, nil, typ, r.Reason, action, "%s", note)
		}
	}
	Apply(obj, r)
	if err := patcher.Patch(ctx, obj,
		patch.WithOwnedConditions{Conditions: Owned},
		patch.WithStatusObservedGeneration{},
		patch.WithFieldOwner(w.FieldOwner),
	); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}
