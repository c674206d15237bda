package cnpgdriver

import (
	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
)

// Class is what a CNPG Backup phase means for the run.
type Class int

// The classes of CNPG Backup phases.
const (
	// Waiting: CNPG has not started the backup (or cannot yet); the run
	// keeps going, failed after the parameters' waitTimeout.
	Waiting Class = iota
	// Running: the backup is being taken; the run reports progress.
	Running
	// Completed: the backup is restorable; the run succeeds.
	Completed
	// Failed: the run fails BackendFailed with CNPG's error.
	Failed
)

func (c Class) String() string {
	return [...]string{"Waiting", "Running", "Completed", "Failed"}[c]
}

// Phases maps every phase of postgresql.cnpg.io/v1 Backup in the CNPG API
// module (and the empty phase of a Backup CNPG has not seen yet) to its
// class and, for running phases, a progress percentage.
var Phases = map[cnpgv1.BackupPhase]struct {
	Class   Class
	Percent int32
}{
	"":                                    {Waiting, 0},
	cnpgv1.BackupPhasePending:             {Waiting, 0},
	cnpgv1.BackupPhaseWalArchivingFailing: {Waiting, 0},
	cnpgv1.BackupPhaseStarted:             {Running, 10},
	cnpgv1.BackupPhaseRunning:             {Running, 50},
	cnpgv1.BackupPhaseFinalizing:          {Running, 90},
	cnpgv1.BackupPhaseCompleted:           {Completed, 100},
	cnpgv1.BackupPhaseFailed:              {Failed, 0},
}

// Classify returns the class of phase and its progress; a phase not in
// Phases (a newer operator's) is Waiting, so it is bounded too.
func Classify(phase cnpgv1.BackupPhase) (Class, int32) {
	if p, ok := Phases[phase]; ok {
		return p.Class, p.Percent
	}
	return Waiting, 0
}
