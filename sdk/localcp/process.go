package localcp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ProcessState is what the state file records of one started process, enough
// to find, probe and stop it from another invocation of the CLI.
type ProcessState struct {
	Name   string   `json:"name"`
	PID    int      `json:"pid"`
	Binary string   `json:"binary"`
	Args   []string `json:"args"`
	Log    string   `json:"log"`
	Health Health   `json:"health"`
}

// Health says how to probe a component: an HTTP GET of URL that must
// answer 200. Mode is "http", "https-insecure" (a self-signed serving
// certificate, as kube-controller-manager's) or "https-client" (the cluster
// CA and the admin client certificate, as kube-apiserver's /readyz needs).
type Health struct {
	URL  string `json:"url"`
	Mode string `json:"mode"`
}

// probe returns nil when the component answers healthy.
func (h Health) probe(ctx context.Context, pki PKI) error {
	client := &http.Client{Timeout: 2 * time.Second}
	switch h.Mode {
	case "https-insecure":
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // loopback, self-signed
	case "https-client":
		ca, err := os.ReadFile(pki.CACert())
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		cert, err := tls.LoadX509KeyPair(pki.ClientCert(AdminIdentity.User), pki.ClientKey(AdminIdentity.User))
		if err != nil {
			return err
		}
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d: %s", h.URL, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// process is a started component.
type process struct {
	ProcessState
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

func (p *process) hasExited() bool {
	if p.exited == nil {
		return !pidAlive(p.PID, p.Binary)
	}
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// startProcess starts binary with args, output appended to logFile. Detached
// processes get their own session so they outlive the caller; attached ones
// are killed by the kernel if the caller dies (Pdeathsig), so a crashed test
// binary leaves nothing behind.
func startProcess(name, binary string, args, env []string, logFile string, detach bool) (*process, error) {
	if !fileExists(binary) {
		return nil, fmt.Errorf("%s: binary %s not found: build it with `make build` (cozystack-local build)", name, binary)
	}
	if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
		return nil, err
	}
	lf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(lf, "\n==== %s starting %s %s\n", time.Now().Format(time.RFC3339), binary, strings.Join(args, " "))
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Env = append(os.Environ(), env...)
	if detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{
		ProcessState: ProcessState{Name: name, PID: cmd.Process.Pid, Binary: binary, Args: args, Log: logFile},
		cmd:          cmd,
		exited:       make(chan struct{}),
	}
	go func() {
		p.err = cmd.Wait()
		lf.Close()
		close(p.exited)
	}()
	return p, nil
}

// waitHealthy polls the process's health until it answers, the process
// exits, or timeout passes. Errors carry the tail of the component's log.
func waitHealthy(ctx context.Context, p *process, pki PKI, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if p.hasExited() {
			return fmt.Errorf("%s exited during start (%v); last lines of %s:\n%s", p.Name, p.err, p.Log, logTail(p.Log, 25))
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = p.Health.probe(pctx, pki)
		cancel()
		if last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not healthy after %s (%v); last lines of %s:\n%s", p.Name, timeout, last, p.Log, logTail(p.Log, 25))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func logTail(file string, n int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// stopProcess sends SIGTERM, waits up to grace, then SIGKILLs. It returns
// once the process is gone. A pid that now belongs to another program is
// left alone.
func stopProcess(p *process, grace time.Duration) error {
	if p.hasExited() {
		return nil
	}
	_ = syscall.Kill(p.PID, syscall.SIGTERM)
	if waitGone(p, grace) {
		return nil
	}
	_ = syscall.Kill(p.PID, syscall.SIGKILL)
	if waitGone(p, 10*time.Second) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.Name, p.PID)
}

func waitGone(p *process, d time.Duration) bool {
	if p.exited != nil {
		select {
		case <-p.exited:
			return true
		case <-time.After(d):
			return false
		}
	}
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !pidAlive(p.PID, p.Binary) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// pidAlive reports whether pid is a live (not zombie) process running binary.
// Checking the executable guards against a recycled pid.
func pidAlive(pid int, binary string) bool {
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(cmdline) == 0 {
		return false
	}
	argv0 := string(bytes.SplitN(cmdline, []byte{0}, 2)[0])
	return binary == "" || argv0 == binary
}

// ProcessesReferencing lists live processes whose command line mentions s
// (for example a state directory). Tests use it to prove `down` left nothing.
func ProcessesReferencing(s string) ([]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(cmdline) == 0 {
			continue
		}
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if strings.Contains(line, s) {
			found = append(found, fmt.Sprintf("%d %s", pid, line))
		}
	}
	return found, nil
}

// checkPortFree fails with a message naming the component when a loopback
// port is taken.
func checkPortFree(component string, port int) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("port %s, needed by %s, is in use: stop what holds it (another `cozystack-local up`? run `cozystack-local down`) or pick free ports with --ports=auto", addr, component)
	}
	return l.Close()
}

// Free ports are drawn below Linux's default ephemeral range (32768-60999):
// a port the kernel hands out with Listen(":0") can be given to an outgoing
// connection's local end before the component binds it, a race seen here
// when several control planes start at once.
const (
	freePortMin = 20000
	freePortMax = 32000
)

// FreePort returns an unused loopback port outside the ephemeral range, for
// servers that tests start beside a control plane.
func FreePort() (int, error) { return freePort() }

// freePort returns an unused loopback port outside the ephemeral range.
func freePort() (int, error) {
	for range 100 {
		port := freePortMin + rand.IntN(freePortMax-freePortMin)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free loopback port in %d-%d after 100 tries", freePortMin, freePortMax)
}
