package velerodriver

import (
	velerov1 "github.com/vmware-tanzu/velero/pkg/apis/velero/v1"
)

// State is what a Velero phase means for the run watching it.
type State string

// The states of a run on a Velero object.
const (
	// StateWaiting: Velero has not started the run (no phase yet, New,
	// Queued, ReadyToStart). Bounded by the parameters' startTimeout,
	// measured from the object's creation: then Failed, BackendFailed.
	StateWaiting State = "Waiting"
	// StateRunning: Velero works on it; progress is reported (item
	// counts), so the core's stallTimeout and runTimeout bound it.
	StateRunning State = "Running"
	// StateSucceeded: Completed.
	StateSucceeded State = "Succeeded"
	// StateDegraded: PartiallyFailed. The run succeeds (what was backed up
	// or restored is usable) and says Degraded=True with item counts.
	StateDegraded State = "Degraded"
	// StateInvalid: FailedValidation. Failed, InvalidParameters, with
	// Velero's validation errors.
	StateInvalid State = "Invalid"
	// StateFailed: Failed, or a backup being deleted under the run
	// (Deleting). Failed, BackendFailed, with Velero's failure reason.
	StateFailed State = "Failed"
)

// backupStates maps every phase of a Velero Backup (velero.io/v1
// BackupPhase, Velero v1.18) to a State; phases.go's test checks it
// covers every BackupPhase constant of the velero module.
var backupStates = map[velerov1.BackupPhase]State{
	"":                                             StateWaiting,
	velerov1.BackupPhaseNew:                        StateWaiting,
	velerov1.BackupPhaseQueued:                     StateWaiting,
	velerov1.BackupPhaseReadyToStart:               StateWaiting,
	velerov1.BackupPhaseFailedValidation:           StateInvalid,
	velerov1.BackupPhaseInProgress:                 StateRunning,
	velerov1.BackupPhaseWaitingForPluginOperations: StateRunning,
	velerov1.BackupPhaseWaitingForPluginOperationsPartiallyFailed: StateRunning,
	velerov1.BackupPhaseFinalizing:                                StateRunning,
	velerov1.BackupPhaseFinalizingPartiallyFailed:                 StateRunning,
	velerov1.BackupPhaseCompleted:                                 StateSucceeded,
	velerov1.BackupPhasePartiallyFailed:                           StateDegraded,
	velerov1.BackupPhaseFailed:                                    StateFailed,
	velerov1.BackupPhaseDeleting:                                  StateFailed,
}

// restoreStates maps every phase of a Velero Restore.
var restoreStates = map[velerov1.RestorePhase]State{
	"":                                    StateWaiting,
	velerov1.RestorePhaseNew:              StateWaiting,
	velerov1.RestorePhaseFailedValidation: StateInvalid,
	velerov1.RestorePhaseInProgress:       StateRunning,
	velerov1.RestorePhaseWaitingForPluginOperations:                StateRunning,
	velerov1.RestorePhaseWaitingForPluginOperationsPartiallyFailed: StateRunning,
	velerov1.RestorePhaseFinalizing:                                StateRunning,
	velerov1.RestorePhaseFinalizingPartiallyFailed:                 StateRunning,
	velerov1.RestorePhaseCompleted:                                 StateSucceeded,
	velerov1.RestorePhasePartiallyFailed:                           StateDegraded,
	velerov1.RestorePhaseFailed:                                    StateFailed,
}

// BackupState returns the State of a Velero Backup phase; a phase this
// driver does not know (a later Velero) is StateWaiting, so it is bounded
// by startTimeout and named in the message, never waited on forever.
func BackupState(p velerov1.BackupPhase) (State, bool) {
	s, ok := backupStates[p]
	if !ok {
		return StateWaiting, false
	}
	return s, true
}

// RestoreState is BackupState for a Velero Restore phase.
func RestoreState(p velerov1.RestorePhase) (State, bool) {
	s, ok := restoreStates[p]
	if !ok {
		return StateWaiting, false
	}
	return s, true
}
