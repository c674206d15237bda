package conformance

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"cozystack.io/sdk/backup/api/v1alpha1"
)

// testUnknownOptions: parameters with an unknown key fail the run
// InvalidParameters naming the key, and nothing is created.
func testUnknownOptions(t *testing.T, e *env) {
	ns := e.testNamespace(t)
	e.replica(t, "options-0", nil)
	job := e.backupJob(t, ns, "unknown-key", e.s.Driver, e.s.UnknownParameters, true)
	done := e.waitBackupPhase(t, ns, job.Name, v1alpha1.PhaseFailed)
	checkReady(t, done.Status.Conditions, metav1.ConditionFalse, v1alpha1.ReasonInvalidParameters, e.s.UnknownKey)
	if objs := e.backend(t, job.UID); len(objs) > 0 {
		t.Errorf("a run refused for its parameters created %d backend objects", len(objs))
	}
}
