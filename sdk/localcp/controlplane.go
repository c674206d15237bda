package localcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The service IP range kube-apiserver allocates from. It is only bookkeeping
// here: nothing routes or dials it (no kube-proxy, and APIServices are only
// ever registered behind ExternalName Services pointing at localhost).
const (
	ServiceClusterIPRange = "10.0.0.0/24"
	ServiceClusterIP      = "10.0.0.1"
)

// FluxNamespace is where helm-controller runs (RUNTIME_NAMESPACE).
const FluxNamespace = "flux-system"

// Ports are the loopback ports of one control plane. A zero field is filled
// with a free port at start.
type Ports struct {
	Etcd                  int `json:"etcd"`
	EtcdPeer              int `json:"etcdPeer"`
	APIServer             int `json:"apiServer"`
	ControllerManager     int `json:"controllerManager"`
	HelmControllerHealth  int `json:"helmControllerHealth"`
	HelmControllerMetrics int `json:"helmControllerMetrics"`
	Registry              int `json:"registry"`
}

// DefaultPorts are the fixed ports of `cozystack-local up`, chosen off the
// well-known ones so a real cluster's tooling on this host does not clash.
func DefaultPorts() Ports {
	return Ports{Etcd: 23790, EtcdPeer: 23800, APIServer: 16443, ControllerManager: 20257,
		HelmControllerHealth: 19440, HelmControllerMetrics: 18080, Registry: 15000}
}

func (p *Ports) fill() error {
	for _, f := range []*int{&p.Etcd, &p.EtcdPeer, &p.APIServer, &p.ControllerManager, &p.HelmControllerHealth, &p.HelmControllerMetrics, &p.Registry} {
		if *f == 0 {
			port, err := freePort()
			if err != nil {
				return err
			}
			*f = port
		}
	}
	return nil
}

// Options configure Start.
type Options struct {
	// Layout locates the built binaries and CRDs.
	Layout Layout
	// Dir holds all state: etcd data, PKI, kubeconfigs, logs, registry
	// storage and state.json.
	Dir string
	// Ports; zero fields are picked free.
	Ports Ports
	// HelmController and Registry start those optional components.
	HelmController bool
	Registry       bool
	// Detach starts processes in their own session so they outlive the
	// caller (the CLI); otherwise they die with it (tests).
	Detach bool
	// Out receives progress lines; nil discards them.
	Out io.Writer
	// StartTimeout bounds each component's start; default 90s.
	StartTimeout time.Duration
}

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

// ControlPlane is a running local control plane.
type ControlPlane struct {
	State
	opts  Options
	pki   PKI
	procs []*process
}

// StateFile returns the path of the state file in dir.
func StateFile(dir string) string { return filepath.Join(dir, "state.json") }

// Binaries needed by Start for opts.
func (o Options) binaries() []string {
	bins := []string{"etcd", "kube-apiserver", "kube-controller-manager"}
	if o.HelmController {
		bins = append(bins, "helm-controller")
	}
	if o.Registry {
		bins = append(bins, "registry")
	}
	return bins
}

// Start brings up etcd, kube-apiserver, kube-controller-manager and, as
// asked, helm-controller and the registry, in that order, each on loopback
// and each waited for until healthy. It installs the Flux CRDs before
// helm-controller starts. On any error it stops what it started.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 90 * time.Second
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if missing := opts.Layout.MissingBinaries(opts.binaries()...); len(missing) > 0 {
		return nil, fmt.Errorf("%w: %v missing in %s: run `cozystack-local build --cache %s` (`make build` for the default cache) first",
			ErrNotBuilt, missing, opts.Layout.BinDir(), opts.Layout.Root)
	}
	if prev, err := ReadState(dir); err == nil {
		for _, p := range prev.Processes {
			if pidAlive(p.PID, p.Binary) {
				return nil, fmt.Errorf("%w: %s (pid %d) of the control plane in %s is still running: run `cozystack-local down --dir %s` first",
					ErrAlreadyRunning, p.Name, p.PID, dir, dir)
			}
		}
	}
	ports := opts.Ports
	if err := ports.fill(); err != nil {
		return nil, err
	}
	named := []struct {
		name string
		port int
		on   bool
	}{
		{"etcd", ports.Etcd, true}, {"etcd (peer)", ports.EtcdPeer, true},
		{"kube-apiserver", ports.APIServer, true}, {"kube-controller-manager", ports.ControllerManager, true},
		{"helm-controller (health)", ports.HelmControllerHealth, opts.HelmController},
		{"helm-controller (metrics)", ports.HelmControllerMetrics, opts.HelmController},
		{"registry", ports.Registry, opts.Registry},
	}
	for _, n := range named {
		if n.on {
			if err := checkPortFree(n.name, n.port); err != nil {
				return nil, err
			}
		}
	}

	cp := &ControlPlane{
		State: State{Dir: dir, Ports: ports, Kubeconfig: filepath.Join(dir, "kubeconfig")},
		opts:  opts,
		pki:   PKIIn(dir),
	}
	if err := cp.pki.Generate(AdminIdentity, ControllerManagerIdent, HelmControllerIdentity); err != nil {
		return nil, fmt.Errorf("generate certificates: %w", err)
	}
	if err := cp.writeKubeconfigs(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = cp.Stop()
		}
	}()
	p, given := &cp.Ports, opts.Ports
	steps := []step{
		{"etcd", []*int{&p.Etcd, &p.EtcdPeer}, given.Etcd == 0 && given.EtcdPeer == 0, cp.startEtcd},
		{"kube-apiserver", []*int{&p.APIServer}, given.APIServer == 0, cp.startAPIServer},
		{"flux CRDs", nil, false, cp.installCRDs},
		{"kube-controller-manager", []*int{&p.ControllerManager}, given.ControllerManager == 0, cp.startControllerManager},
	}
	if opts.HelmController {
		steps = append(steps, step{"helm-controller", []*int{&p.HelmControllerHealth, &p.HelmControllerMetrics},
			given.HelmControllerHealth == 0 && given.HelmControllerMetrics == 0, cp.startHelmController})
	}
	if opts.Registry {
		steps = append(steps, step{"registry", []*int{&p.Registry}, given.Registry == 0, cp.startRegistry})
	}
	for _, st := range steps {
		if err := cp.runStep(ctx, st); err != nil {
			return nil, err
		}
	}
	ok = true
	return cp, nil
}

// step is one start step and the ports its component binds; picked says
// they were picked free rather than given, so a retry may change them.
type step struct {
	name   string
	ports  []*int
	picked bool
	fn     func(context.Context) error
}

// runStep runs a step. When a component loses the race for a port that was
// picked free (another process bound it in between), it is started again on
// newly picked ports, up to twice; fixed ports are never changed.
func (cp *ControlPlane) runStep(ctx context.Context, st step) error {
	for attempt := 0; ; attempt++ {
		err := st.fn(ctx)
		if err == nil || attempt == 2 || !st.picked ||
			!strings.Contains(err.Error(), "address already in use") {
			return err
		}
		fmt.Fprintf(cp.opts.Out, "  %-24s lost a picked port to another process; retrying on new ports\n", st.name)
		cp.forget(st.name)
		for _, port := range st.ports {
			if *port, err = freePort(); err != nil {
				return err
			}
		}
		if err := cp.writeKubeconfigs(); err != nil {
			return err
		}
	}
}

// forget drops an exited component from the process list and state.
func (cp *ControlPlane) forget(name string) {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		if cp.procs[i].Name == name {
			cp.procs = append(cp.procs[:i], cp.procs[i+1:]...)
			break
		}
	}
	for i := len(cp.Processes) - 1; i >= 0; i-- {
		if cp.Processes[i].Name == name {
			cp.Processes = append(cp.Processes[:i], cp.Processes[i+1:]...)
			break
		}
	}
}

// run starts one component and waits until it is healthy.
func (cp *ControlPlane) run(ctx context.Context, name string, args, env []string, health Health) error {
	start := time.Now()
	fmt.Fprintf(cp.opts.Out, "  %-24s starting\n", name)
	p, err := startProcess(name, cp.opts.Layout.Binary(name), args, env, filepath.Join(cp.Dir, "logs", name+".log"), cp.opts.Detach)
	if err != nil {
		return err
	}
	p.Health = health
	cp.procs = append(cp.procs, p)
	cp.Processes = append(cp.Processes, p.ProcessState)
	if err := cp.writeState(); err != nil {
		return err
	}
	if err := waitHealthy(ctx, p, cp.pki, cp.opts.StartTimeout); err != nil {
		return err
	}
	fmt.Fprintf(cp.opts.Out, "  %-24s ready in %s (pid %d)\n", name, time.Since(start).Round(10*time.Millisecond), p.PID)
	return nil
}

func (cp *ControlPlane) startEtcd(ctx context.Context) error {
	client := fmt.Sprintf("http://127.0.0.1:%d", cp.Ports.Etcd)
	peer := fmt.Sprintf("http://127.0.0.1:%d", cp.Ports.EtcdPeer)
	args := []string{
		"--name=local",
		"--data-dir=" + filepath.Join(cp.Dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=local=" + peer,
		// A throwaway local store: fsync buys nothing and costs seconds on
		// shared disks.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
	return cp.run(ctx, "etcd", args, nil, Health{URL: client + "/health", Mode: "http"})
}

func (cp *ControlPlane) startAPIServer(ctx context.Context) error {
	p := cp.pki
	args := []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", cp.Ports.Etcd),
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", cp.Ports.APIServer),
		"--advertise-address=127.0.0.1",
		// The endpoint reconciler refuses a loopback advertise address.
		"--endpoint-reconciler-type=none",
		"--service-cluster-ip-range=" + ServiceClusterIPRange,
		"--authorization-mode=RBAC",
		"--client-ca-file=" + p.CACert(),
		"--tls-cert-file=" + p.ServingCert(),
		"--tls-private-key-file=" + p.ServingKey(),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.ServiceAccountPub(),
		"--service-account-signing-key-file=" + p.ServiceAccountKey(),
		// Front-proxy (requestheader) settings for aggregated API servers.
		"--requestheader-client-ca-file=" + p.FrontProxyCACert(),
		"--requestheader-allowed-names=" + FrontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-uid-headers=X-Remote-Uid",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p.FrontProxyClientCert(),
		"--proxy-client-key-file=" + p.FrontProxyClientKey(),
		"--enable-aggregator-routing=false",
		"--allow-privileged=true",
		"--profiling=false",
		"--v=1",
	}
	return cp.run(ctx, "kube-apiserver", args, nil,
		Health{URL: fmt.Sprintf("https://127.0.0.1:%d/readyz", cp.Ports.APIServer), Mode: "https-client"})
}

func (cp *ControlPlane) startControllerManager(ctx context.Context) error {
	p := cp.pki
	kc := filepath.Join(cp.Dir, "kube-controller-manager.kubeconfig")
	args := []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", cp.Ports.ControllerManager),
		"--cert-dir=" + filepath.Join(cp.Dir, "kube-controller-manager"),
		"--leader-elect=false",
		// Each controller acts as its own kube-system service account (the
		// default RBAC roles assume it). Only what a cluster without nodes
		// needs runs: ownerReference garbage collection, namespace
		// deletion, service-account tokens, and ClusterRole aggregation
		// (without it the built-in admin/edit/view roles, and any role
		// that aggregates catalogs' rules by label, stay empty), and
		// ResourceQuota usage (quota admission refuses every counted
		// create while a quota has no status).
		"--controllers=garbage-collector-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller,clusterrole-aggregation-controller,resourcequota-controller",
		// Quotas are recomputed every 15 s rather than 5 min: the
		// resources of CRDs installed after start (found by discovery
		// every 30 s) are otherwise counted only at the next full sync,
		// and until then quota admission refuses their creates.
		"--resource-quota-sync-period=15s",
		"--service-account-private-key-file=" + p.ServiceAccountKey(),
		"--root-ca-file=" + p.CACert(),
		"--use-service-account-credentials=true",
		"--v=1",
	}
	return cp.run(ctx, "kube-controller-manager", args, nil,
		Health{URL: fmt.Sprintf("https://127.0.0.1:%d/healthz", cp.Ports.ControllerManager), Mode: "https-insecure"})
}

// DefaultServiceAccount is the ServiceAccount helm-controller impersonates
// for a HelmRelease without spec.serviceAccountName (its
// --default-service-account): every namespace's "default", which holds no
// rights, so such a release installs nothing.
const DefaultServiceAccount = "default"

func (cp *ControlPlane) startHelmController(ctx context.Context) error {
	args := []string{
		"--feature-gates=ExternalArtifact=true",
		fmt.Sprintf("--health-addr=127.0.0.1:%d", cp.Ports.HelmControllerHealth),
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", cp.Ports.HelmControllerMetrics),
		"--enable-leader-election=false",
		"--watch-all-namespaces=true",
		// Flux's multi-tenancy lockdown: a HelmRelease that names no
		// ServiceAccount installs as its namespace's "default" one, which
		// holds no rights, never as helm-controller itself.
		"--default-service-account=" + DefaultServiceAccount,
		"--log-level=info",
		"--log-encoding=console",
	}
	env := []string{
		"KUBECONFIG=" + filepath.Join(cp.Dir, "helm-controller.kubeconfig"),
		"RUNTIME_NAMESPACE=" + FluxNamespace,
	}
	return cp.run(ctx, "helm-controller", args, env,
		Health{URL: fmt.Sprintf("http://127.0.0.1:%d/readyz", cp.Ports.HelmControllerHealth), Mode: "http"})
}

func (cp *ControlPlane) startRegistry(ctx context.Context) error {
	cfg := filepath.Join(cp.Dir, "registry.yaml")
	content := fmt.Sprintf(`version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: 127.0.0.1:%d
`, filepath.Join(cp.Dir, "registry"), cp.Ports.Registry)
	if err := os.WriteFile(cfg, []byte(content), 0o644); err != nil {
		return err
	}
	// Distribution exports OpenTelemetry traces by default; there is no
	// collector here.
	env := []string{"OTEL_TRACES_EXPORTER=none", "OTEL_SDK_DISABLED=true"}
	return cp.run(ctx, "registry", []string{"serve", cfg}, env,
		Health{URL: fmt.Sprintf("http://127.0.0.1:%d/v2/", cp.Ports.Registry), Mode: "http"})
}

func (cp *ControlPlane) writeKubeconfigs() error {
	server := fmt.Sprintf("https://127.0.0.1:%d", cp.Ports.APIServer)
	for file, id := range map[string]ClientIdentity{
		"kubeconfig":                         AdminIdentity,
		"kube-controller-manager.kubeconfig": ControllerManagerIdent,
		"helm-controller.kubeconfig":         HelmControllerIdentity,
	} {
		if err := WriteKubeconfig(filepath.Join(cp.Dir, file), server, cp.pki, id.User); err != nil {
			return err
		}
	}
	return nil
}

// WriteKubeconfig writes a kubeconfig for user (a client certificate issued
// by pki) against server, with a context named "cozystack-local".
func WriteKubeconfig(file, server string, pki PKI, user string) error {
	cfg := clientcmdapiConfig(server, pki, user)
	return clientcmd.WriteToFile(*cfg, file)
}

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

// RESTConfig returns an admin client configuration.
func (cp *ControlPlane) RESTConfig() (*rest.Config, error) {
	return RESTConfigFromKubeconfig(cp.Kubeconfig)
}

// PKI returns the control plane's certificates.
func (cp *ControlPlane) PKI() PKI { return cp.pki }

// Stop stops every process this control plane started, newest first, and
// returns once all are gone. State on disk is kept.
func (cp *ControlPlane) Stop() error {
	var errs []error
	for i := len(cp.procs) - 1; i >= 0; i-- {
		if err := stopProcess(cp.procs[i], 15*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	cp.procs = nil
	if err := errors.Join(errs...); err != nil {
		return err
	}
	cp.Processes = nil
	if fileExists(cp.Dir) {
		return cp.writeState()
	}
	return nil
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
