package drivercmd

import (
	"context"
	"errors"
	goflag "flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The exit codes of a driver's binary.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// Flags are the values of the common flags, handed to Spec.Run.
type Flags struct {
	// Name of the BackupDriver, Namespace the driver's own namespace (its
	// Lease, its credential Secrets), Identity this replica's name in
	// claims ("" lets the SDK choose).
	Name, Namespace, Identity string
	// LeaseDuration of the registration and ClaimDuration of a run.
	LeaseDuration, ClaimDuration time.Duration
	// Version is Spec.Version.
	Version string
}

// Spec describes a driver's binary.
type Spec struct {
	// Use is the binary's name, e.g. "cnpg-backup-driver"; Short its one
	// line of help.
	Use, Short string
	// DefaultName is the default of --name, e.g. "cnpg".
	DefaultName string
	// Version is the driver's version, shown in its registration.
	Version string
	// AddFlags adds the driver's own flags; nil adds none.
	AddFlags func(fs *pflag.FlagSet)
	// Validate checks the driver's own flags before any connection; its
	// error is a usage error. Nil checks nothing.
	Validate func() error
	// Run runs the driver on cfg until ctx ends (driver.Start, or the
	// driver's own Start). A context.Canceled after ctx ended is a clean
	// stop.
	Run func(ctx context.Context, cfg *rest.Config, f Flags) error
}

// Main runs s with the process's arguments until SIGINT or SIGTERM, and
// exits with its exit code.
func Main(s Spec) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, s, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// usageError marks a command-line error: ExitUsage.
type usageError struct{ error }

// Run runs s with args until ctx ends and returns the exit code; errors
// and usage go to stderr.
func Run(ctx context.Context, s Spec, args []string, stderr io.Writer) int {
	cmd := Command(s)
	cmd.SetArgs(args)
	cmd.SetOut(stderr)
	cmd.SetErr(stderr)
	err := cmd.ExecuteContext(ctx)
	var ue usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %v\n%s", s.Use, err, cmd.UsageString())
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "%s: %v\n", s.Use, err)
		return ExitError
	}
}

// Command returns the cobra command of s (Run executes it).
func Command(s Spec) *cobra.Command {
	var (
		f          = Flags{Version: s.Version}
		kubeconfig string
		probeAddr  string
	)
	cmd := &cobra.Command{
		Use:           s.Use,
		Short:         s.Short,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unexpected arguments %v: the command takes flags only", args)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validate(f); err != nil {
				return usageError{err}
			}
			if s.Validate != nil {
				if err := s.Validate(); err != nil {
					return usageError{err}
				}
			}
			cfg, err := config(kubeconfig)
			if err != nil {
				return fmt.Errorf("kubeconfig: %w", err)
			}
			ctrl.SetLogger(klog.NewKlogr())
			if probeAddr != "0" && probeAddr != "" {
				stop, err := serveProbes(cmd.Context(), probeAddr, cfg)
				if err != nil {
					return fmt.Errorf("--health-probe-bind-address %s: %w", probeAddr, err)
				}
				defer stop()
			}
			err = s.Run(cmd.Context(), cfg, f)
			if err != nil && cmd.Context().Err() != nil && errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	fs := cmd.Flags()
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file; empty means $KUBECONFIG, else the in-cluster configuration")
	fs.StringVar(&f.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the driver's namespace: its Lease and credential Secrets (required; default $POD_NAMESPACE)")
	fs.StringVar(&f.Identity, "identity", os.Getenv("POD_NAME"), "this replica's identity in claims; default $POD_NAME, else <hostname>-<random>")
	fs.StringVar(&f.Name, "name", s.DefaultName, "name of the BackupDriver registration")
	fs.DurationVar(&f.LeaseDuration, "lease-duration", 30*time.Second, "the registration Lease's duration, renewed every third (whole seconds)")
	fs.StringVar(&probeAddr, "health-probe-bind-address", "0", `address of /healthz and /readyz, e.g. ":8081"; "0" serves none`)
	fs.DurationVar(&f.ClaimDuration, "claim-duration", 60*time.Second, "a run's claim duration, renewed every third (whole seconds, at most 1h)")
	if s.AddFlags != nil {
		s.AddFlags(fs)
	}
	logFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(logFlags)
	fs.AddGoFlagSet(logFlags)
	return cmd
}

// validate checks what driver.Setup would refuse, before connecting.
func validate(f Flags) error {
	if f.Namespace == "" {
		return errors.New("--namespace is required (the driver's own namespace), or $POD_NAMESPACE")
	}
	if errs := validation.IsDNS1123Label(f.Name); len(errs) > 0 {
		return fmt.Errorf("--name %q: %s", f.Name, strings.Join(errs, "; "))
	}
	if f.LeaseDuration < time.Second || f.ClaimDuration < time.Second || f.ClaimDuration > time.Hour {
		return fmt.Errorf("--lease-duration %s and --claim-duration %s must be at least 1s, the claim's at most 1h", f.LeaseDuration, f.ClaimDuration)
	}
	return nil
}

func config(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	if kubeconfig == "" {
		return rest.InClusterConfig()
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}
