package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"cozystack.io/sdk/localcp"
	"cozystack.io/tools/internal/mainjob"
)

func main() {
	// The main job's clients log through controller-runtime: to klog
	// (stderr), instead of its warning that no logger was set.
	ctrllog.SetLogger(klog.NewKlogr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

type globals struct {
	dir   string
	cache string
}

func (g *globals) layout() localcp.Layout {
	if g.cache != "" {
		abs, _ := filepath.Abs(g.cache)
		return localcp.Layout{Root: abs}
	}
	return localcp.DefaultLayout()
}

func (g *globals) stateDir() string {
	if g.dir != "" {
		abs, _ := filepath.Abs(g.dir)
		return abs
	}
	return g.layout().StateDir()
}

func newRoot() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "cozystack-local",
		Short:         "Build and run a local Kubernetes control plane from pinned Go modules",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.dir, "dir", "", "state directory (default <cache>/local)")
	root.PersistentFlags().StringVar(&g.cache, "cache", "", "cache directory with bin/ and crds/ (default $COZYSTACK_CACHE_DIR or <repo>/.cache)")
	root.AddCommand(newBuild(g), newUp(g), newDown(g), newStatus(g), newEnv(g), newSmoke(g), newMainJob(g), newCert(g), newRun(g))
	return root
}

func newBuild(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "build [binary...]",
		Short: "Build the pinned binaries (all, or those named) into <cache>/bin; idempotent",
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			l := g.layout()
			fmt.Fprintf(cmd.OutOrStdout(), "building pinned components into %s\n", l.BinDir())
			err := localcp.Build(cmd.Context(), localcp.BuildOptions{Layout: l, Binaries: args, Out: cmd.OutOrStdout()})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "build finished in %s\n", time.Since(start).Round(time.Second))
			return nil
		},
	}
}

func newUp(g *globals) *cobra.Command {
	var ports string
	var noHelm, noRegistry bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "up",
		Short: "Start etcd, kube-apiserver, kube-controller-manager, helm-controller and the registry on loopback",
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			opts := localcp.Options{
				Layout: g.layout(), Dir: g.stateDir(), Detach: true, Out: out,
				HelmController: !noHelm, Registry: !noRegistry, StartTimeout: timeout,
			}
			switch ports {
			case "fixed":
				opts.Ports = localcp.DefaultPorts()
			case "auto":
			default:
				return fmt.Errorf("--ports=%q: use fixed (the default ports) or auto (free ports)", ports)
			}
			// A second `up` (or `make demo`) reuses a healthy control plane.
			if rows, err := localcp.Status(cmd.Context(), opts.Dir); err == nil && len(rows) > 0 && allHealthy(rows) {
				s, err := localcp.ReadState(opts.Dir)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "local control plane in %s is already up (%d components healthy)\n\n", opts.Dir, len(rows))
				printEnv(out, opts.Layout, s)
				return nil
			}
			start := time.Now()
			fmt.Fprintf(out, "starting local control plane in %s\n", opts.Dir)
			cp, err := localcp.Start(cmd.Context(), opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "control plane up in %s\n\n", time.Since(start).Round(10*time.Millisecond))
			printEnv(out, opts.Layout, &cp.State)
			return nil
		},
	}
	c.Flags().StringVar(&ports, "ports", "fixed", "fixed: the default ports (kube-apiserver 16443, registry 15000, ...); auto: free ports")
	c.Flags().BoolVar(&noHelm, "no-helm-controller", false, "do not start helm-controller")
	c.Flags().BoolVar(&noRegistry, "no-registry", false, "do not start the OCI registry")
	c.Flags().DurationVar(&timeout, "timeout", 90*time.Second, "how long each component may take to become healthy")
	return c
}

func allHealthy(rows []localcp.ComponentStatus) bool {
	for _, r := range rows {
		if !r.Healthy {
			return false
		}
	}
	return true
}

func printEnv(out io.Writer, l localcp.Layout, s *localcp.State) {
	fmt.Fprintf(out, "export KUBECONFIG=%s\n", s.Kubeconfig)
	fmt.Fprintf(out, "export PATH=%s:$PATH\n", l.BinDir())
	if h := s.RegistryHost(); h != "" {
		fmt.Fprintf(out, "export COZYSTACK_REGISTRY=%s\n", h)
	}
	fmt.Fprintln(out, "# then: kubectl version; kubectl get helmreleases -A")
}

func newDown(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop every process of the local control plane, by pid; keeps its state",
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "stopping local control plane in %s\n", g.stateDir())
			return localcp.Down(g.stateDir(), cmd.OutOrStdout())
		},
	}
}

func newEnv(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "env",
		Short: "Print shell exports (KUBECONFIG, PATH, and COZYSTACK_REGISTRY when the registry runs) for the running control plane: eval \"$(cozystack-local env)\"",
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := localcp.ReadState(g.stateDir())
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("no control plane in %s: start one with `cozystack-local up`", g.stateDir())
				}
				return err
			}
			if len(s.Processes) == 0 {
				return fmt.Errorf("the control plane in %s is not running: start it with `cozystack-local up`", g.stateDir())
			}
			printEnv(cmd.OutOrStdout(), g.layout(), s)
			return nil
		},
	}
}

func newStatus(g *globals) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "status",
		Short: "Show each component's process and health",
		RunE: func(cmd *cobra.Command, args []string) error {
			rows, err := localcp.Status(cmd.Context(), g.stateDir())
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				return fmt.Errorf("no component is running in %s: start with `cozystack-local up`", g.stateDir())
			}
			out := cmd.OutOrStdout()
			switch output {
			case "json":
				data, _ := json.MarshalIndent(rows, "", "  ")
				fmt.Fprintln(out, string(data))
			case "yaml":
				data, _ := yaml.Marshal(rows)
				fmt.Fprint(out, string(data))
			case "", "table":
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "COMPONENT\tPID\tRUNNING\tHEALTHY\tMESSAGE")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%d\t%t\t%t\t%s\n", r.Name, r.PID, r.Running, r.Healthy, r.Message)
				}
				tw.Flush()
			default:
				return fmt.Errorf("-o %q: use table, json or yaml", output)
			}
			for _, r := range rows {
				if !r.Healthy {
					return fmt.Errorf("%s is not healthy: %s", r.Name, r.Message)
				}
			}
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	return c
}

func newCert(g *globals) *cobra.Command {
	var certFile, keyFile string
	var dnsNames []string
	c := &cobra.Command{
		Use:   "cert --dns NAME[,NAME] --cert FILE --key FILE",
		Short: "Issue a serving certificate signed by the control plane's CA (SANs: the DNS names and 127.0.0.1)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(dnsNames) == 0 || certFile == "" || keyFile == "" {
				return fmt.Errorf("--dns, --cert and --key are required")
			}
			pki := localcp.PKIIn(g.stateDir())
			if _, err := os.Stat(pki.CACert()); err != nil {
				return fmt.Errorf("no CA in %s: start the control plane with `cozystack-local up` first", pki.Dir)
			}
			if err := pki.IssueServing(certFile, keyFile, dnsNames[0], dnsNames...); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s for %v; CA: %s\n", certFile, keyFile, dnsNames, pki.CACert())
			return nil
		},
	}
	c.Flags().StringSliceVar(&dnsNames, "dns", nil, "DNS names of the certificate")
	c.Flags().StringVar(&certFile, "cert", "", "certificate file to write")
	c.Flags().StringVar(&keyFile, "key", "", "key file to write")
	return c
}

func newRun(g *globals) *cobra.Command {
	var health, mode string
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "run NAME --health URL -- BINARY [ARGS...]",
		Short: "Start one more process beside the control plane (e.g. an aggregated API server); status probes it, down stops it",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if health == "" {
				return fmt.Errorf("--health URL is required: the process counts as started once it answers 200")
			}
			start := time.Now()
			p, err := localcp.RunAside(cmd.Context(), g.stateDir(), args[0], args[1], args[2:], localcp.Health{URL: health, Mode: mode}, timeout)
			if errors.Is(err, localcp.ErrAlreadyRunning) {
				fmt.Fprintf(cmd.OutOrStdout(), "  %-24s already running and healthy (pid %d)\n", p.Name, p.PID)
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "  %-24s ready in %s (pid %d), log %s\n", p.Name, time.Since(start).Round(10*time.Millisecond), p.PID, p.Log)
			return nil
		},
	}
	c.Flags().StringVar(&health, "health", "", "URL that answers 200 when the process is ready")
	c.Flags().StringVar(&mode, "health-mode", "https-client", "http, https-insecure, or https-client (cluster CA and admin certificate)")
	c.Flags().DurationVar(&timeout, "timeout", 90*time.Second, "how long the process may take to become healthy")
	return c
}

func newSmoke(g *globals) *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "smoke",
		Short: "Install a one-ConfigMap chart through helm-controller from an ExternalArtifact and check it",
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := localcp.ReadState(g.stateDir())
			if err != nil {
				return fmt.Errorf("no control plane in %s: start one with `cozystack-local up`: %w", g.stateDir(), err)
			}
			cfg, err := localcp.RESTConfigFromKubeconfig(s.Kubeconfig)
			if err != nil {
				return err
			}
			start := time.Now()
			if err := localcp.Smoke(cmd.Context(), cfg, cmd.OutOrStdout(), timeout); err != nil {
				return fmt.Errorf("smoke check failed: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "smoke check passed in %s\n", time.Since(start).Round(10*time.Millisecond))
			return nil
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 3*time.Minute, "how long the whole check may take")
	return c
}

func newMainJob(g *globals) *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "main-job",
		Short: "Publish and install the platform's and both service catalogs, create a tenant with a Postgres and a VMInstance, then back both up and restore them through the catalogs' drivers (needs cozystack-api, -controller and -operator running and the drivers built; make demo does both)",
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := localcp.ReadState(g.stateDir())
			if err != nil {
				return fmt.Errorf("no control plane in %s: start one with `make demo`: %w", g.stateDir(), err)
			}
			if s.RegistryHost() == "" {
				return fmt.Errorf("the control plane in %s runs no registry: start it without --no-registry", g.stateDir())
			}
			cfg, err := localcp.RESTConfigFromKubeconfig(s.Kubeconfig)
			if err != nil {
				return err
			}
			root, ok := localcp.RepoRoot()
			if !ok {
				return fmt.Errorf("the main job publishes the catalogs of this repository: run it from inside the repository")
			}
			start := time.Now()
			dir := g.stateDir()
			err = mainjob.Run(cmd.Context(), mainjob.Config{
				RepoRoot: root, Kube: cfg, Registry: s.RegistryHost(), Out: cmd.OutOrStdout(), Timeout: timeout,
				BinDir: g.layout().BinDir(), WorkDir: dir,
				// The drivers join the control plane's processes: status
				// probes them, down stops them.
				StartProcess: func(ctx context.Context, name, binary string, args []string, healthURL string) error {
					_, err := localcp.RunAside(ctx, dir, name, binary, args, localcp.Health{URL: healthURL, Mode: "http"}, 90*time.Second)
					if errors.Is(err, localcp.ErrAlreadyRunning) {
						return nil
					}
					return err
				},
			})
			if err != nil {
				return fmt.Errorf("main job failed: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "main job passed in %s; look at it with:\n%s\n", time.Since(start).Round(10*time.Millisecond), mainjob.Summary())
			return nil
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long each wait may take")
	return c
}
