package localcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
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

// ControlPlane is a running local control plane.
type ControlPlane struct {
	State
	opts  Options
	pki   PKI
	procs []*process
}

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
