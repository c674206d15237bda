package localcp

// The state file of a control plane (StateFile): written by Start, read
// by Down and Status, which stop and probe a control plane started
// detached.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// State is persisted in <Dir>/state.json so that `status` and `down` can find
// the processes of a detached control plane.
type State struct {
	Dir        string         `json:"dir"`
	Ports      Ports          `json:"ports"`
	Kubeconfig string         `json:"kubeconfig"`
	Processes  []ProcessState `json:"processes"`
}

// RegistryHost returns host:port of the OCI registry, or "" when none runs.
func (s *State) RegistryHost() string {
	for _, p := range s.Processes {
		if p.Name == "registry" {
			return "127.0.0.1:" + strconv.Itoa(s.Ports.Registry)
		}
	}
	return ""
}

// StateFile returns the path of the state file in dir.
func StateFile(dir string) string { return filepath.Join(dir, "state.json") }

func (cp *ControlPlane) writeState() error {
	return writeState(&cp.State)
}

func writeState(s *State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := StateFile(s.Dir) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, StateFile(s.Dir))
}

// ReadState reads the state file of the control plane in dir.
func ReadState(dir string) (*State, error) {
	data, err := os.ReadFile(StateFile(dir))
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", StateFile(dir), err)
	}
	return &s, nil
}

// Down stops the processes recorded in dir's state file (from a detached
// Start), newest first, by pid, and reports what it stopped. A recorded pid
// that now belongs to another program is left alone.
func Down(dir string, out io.Writer) error {
	s, err := ReadState(dir)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(out, "no control plane state in %s: nothing to stop\n", dir)
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for i := len(s.Processes) - 1; i >= 0; i-- {
		ps := s.Processes[i]
		p := &process{ProcessState: ps}
		if !pidAlive(ps.PID, ps.Binary) {
			fmt.Fprintf(out, "  %-24s not running\n", ps.Name)
			continue
		}
		if err := stopProcess(p, 15*time.Second); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(out, "  %-24s stopped (pid %d)\n", ps.Name, ps.PID)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.Processes = nil
	return writeState(s)
}

// ComponentStatus is one row of `cozystack-local status`.
type ComponentStatus struct {
	Name    string `json:"name"`
	PID     int    `json:"pid"`
	Running bool   `json:"running"`
	Healthy bool   `json:"healthy"`
	Message string `json:"message,omitempty"`
	Log     string `json:"log"`
}

// Status probes each recorded component of the control plane in dir.
func Status(ctx context.Context, dir string) ([]ComponentStatus, error) {
	s, err := ReadState(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no control plane in %s: start one with `cozystack-local up`", dir)
		}
		return nil, err
	}
	pki := PKIIn(dir)
	var rows []ComponentStatus
	for _, ps := range s.Processes {
		row := ComponentStatus{Name: ps.Name, PID: ps.PID, Log: ps.Log}
		row.Running = pidAlive(ps.PID, ps.Binary)
		if !row.Running {
			row.Message = "not running; see " + ps.Log
		} else if err := ps.Health.probe(ctx, pki); err != nil {
			row.Message = err.Error()
		} else {
			row.Healthy = true
		}
		rows = append(rows, row)
	}
	return rows, nil
}
