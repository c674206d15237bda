package localcp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// ErrAlreadyRunning is returned, with the process, by RunAside when a
// healthy process of that name runs already.
var ErrAlreadyRunning = errors.New("already running")

// RunAside starts one more process beside the control plane in dir (for
// example an aggregated API server under development), detached, waits
// until health answers, and records it in the state file so that `status`
// probes it and `down` stops it first. A process of the same name that is
// still running is an error.
func RunAside(ctx context.Context, dir, name, binary string, args []string, health Health, timeout time.Duration) (*ProcessState, error) {
	s, err := ReadState(dir)
	if err != nil {
		return nil, fmt.Errorf("no control plane in %s: start it with `cozystack-local up` first: %w", dir, err)
	}
	pki := PKIIn(dir)
	for _, p := range s.Processes {
		if p.Name == name && pidAlive(p.PID, p.Binary) {
			if p.Health.probe(ctx, pki) == nil {
				return &p, ErrAlreadyRunning
			}
			return nil, fmt.Errorf("%s is running (pid %d) but not healthy: see %s, or stop it with `cozystack-local down`", name, p.PID, p.Log)
		}
	}
	abs, err := filepath.Abs(binary)
	if err != nil {
		return nil, err
	}
	p, err := startProcess(name, abs, args, nil, filepath.Join(dir, "logs", name+".log"), true)
	if err != nil {
		return nil, err
	}
	p.Health = health
	if err := waitHealthy(ctx, p, pki, timeout); err != nil {
		_ = stopProcess(p, 5*time.Second)
		return nil, err
	}
	kept := s.Processes[:0]
	for _, old := range s.Processes {
		if old.Name != name {
			kept = append(kept, old)
		}
	}
	s.Processes = append(kept, p.ProcessState)
	if err := writeState(s); err != nil {
		return nil, err
	}
	return &p.ProcessState, nil
}
