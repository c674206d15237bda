package main

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"cozystack.io/catalogs/virtualization/backup/velerodriver"
	"cozystack.io/sdk/backup/driver"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// version is set at build time (-ldflags -X main.version=...).
var version = "0.1.0"

func main() { os.Exit(execute(newCommand(), os.Args[1:])) }

type flags struct {
	kubeconfig, namespace, identity, veleroNamespace string
	lease, claim, verify                             time.Duration
}

func newCommand() *cobra.Command {
	var f flags
	cmd := &cobra.Command{
		Use:           "velero-backup-driver",
		Short:         "Run the Velero backup driver (strategy kind Velero) of the virtualization catalog",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(klog.NewKlogr())
			return run(cmd.Context(), f)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	fs := cmd.Flags()
	addFlags(fs, &f)
	logFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(logFlags)
	fs.AddGoFlagSet(logFlags)
	return cmd
}

func addFlags(fs *pflag.FlagSet, f *flags) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file; default the in-cluster configuration")
	fs.StringVar(&f.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the driver's namespace (its Lease); default $POD_NAMESPACE")
	fs.StringVar(&f.identity, "identity", os.Getenv("POD_NAME"), "this replica's identity in claims; default $POD_NAME, else <hostname>-<random>")
	fs.StringVar(&f.veleroNamespace, "velero-namespace", velerodriver.DefaultVeleroNamespace, "the namespace Velero runs in")
	fs.DurationVar(&f.lease, "lease-duration", 30*time.Second, "the registration Lease's duration (whole seconds)")
	fs.DurationVar(&f.claim, "claim-duration", 60*time.Second, "a run's claim duration (whole seconds, at most 1h)")
	fs.DurationVar(&f.verify, "verify-interval", 5*time.Minute, "how often every Backup's Velero backup is checked (capability Verify)")
}

func run(ctx context.Context, f flags) error {
	if f.namespace == "" {
		return usageError{fmt.Errorf("--namespace is required (or $POD_NAMESPACE)")}
	}
	var cfg *rest.Config
	var err error
	if f.kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return fmt.Errorf("kubernetes configuration: %w", err)
	}
	o := velerodriver.Options{
		Driver: driver.Options{Namespace: f.namespace, Identity: f.identity, LeaseDuration: f.lease, ClaimDuration: f.claim,
			Catalog: "virtualization", Version: version},
		VeleroNamespace: f.veleroNamespace,
		VerifyInterval:  f.verify,
	}
	return velerodriver.Start(ctx, cfg, o)
}

// usageError marks a flag or argument error: exit code 2.
type usageError struct{ error }

// execute runs cmd with args until it returns or SIGINT/SIGTERM, and
// returns the exit code.
func execute(cmd *cobra.Command, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(os.Stderr, "error:", err)
	if _, ok := err.(usageError); ok {
		return exitUsage
	}
	return exitError
}
