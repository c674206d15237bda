package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"cozystack.io/catalogs/services/backup/cnpgdriver"
	"cozystack.io/sdk/backup/driver"
)

// version is set at build time (-ldflags -X main.version=...).
var version = "0.1.0"

// usageError is a command-line error: exit code 2.
type usageError struct{ error }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

// run runs the command with args and returns its exit code.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	cmd := newCommand()
	cmd.SetArgs(args)
	cmd.SetOut(stderr)
	cmd.SetErr(stderr)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	err := cmd.ExecuteContext(ctx)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "cnpg-backup-driver: %v\n%s", err, cmd.UsageString())
		return 2
	default:
		fmt.Fprintf(stderr, "cnpg-backup-driver: %v\n", err)
		return 1
	}
}

func newCommand() *cobra.Command {
	var (
		kubeconfig, namespace, identity, name string
		lease, claim                          time.Duration
	)
	cmd := &cobra.Command{
		Use:   "cnpg-backup-driver",
		Short: "Run the CNPG backup driver (strategy kind CNPG of backups.cozystack.io)",
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.NoArgs(cmd, args); err != nil {
				return usageError{err}
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if namespace == "" {
				return usageError{errors.New("--namespace is required (the driver's own namespace)")}
			}
			o := cnpgdriver.Options{Name: name, Namespace: namespace, Version: version, Identity: identity,
				ClaimDuration: claim, LeaseDuration: lease}
			// Check the options before connecting: a bad name or duration
			// is a usage error.
			do := cnpgdriver.DriverOptions(o)
			if err := validate(do); err != nil {
				return usageError{err}
			}
			cfg, err := config(kubeconfig)
			if err != nil {
				return err
			}
			ctrl.SetLogger(klog.NewKlogr())
			err = cnpgdriver.Start(cmd.Context(), cfg, o)
			if err != nil && cmd.Context().Err() != nil && errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file; empty means in-cluster configuration (or $KUBECONFIG)")
	f.StringVar(&namespace, "namespace", "", "the driver's namespace: its Lease and the credential Secrets (required)")
	f.StringVar(&identity, "identity", "", "this replica's identity in claims, e.g. the pod name; default <hostname>-<random>")
	f.StringVar(&name, "name", cnpgdriver.DefaultName, "name of the BackupDriver registration")
	f.DurationVar(&lease, "lease-duration", 30*time.Second, "lease of the registration, renewed every third (whole seconds)")
	f.DurationVar(&claim, "claim-duration", 60*time.Second, "claim lease of a run, renewed every third (whole seconds, at most 1h)")
	return cmd
}

// validate checks what driver.Setup would refuse, without a cluster.
func validate(o driver.Options) error {
	if o.LeaseDuration < time.Second || o.ClaimDuration < time.Second || o.ClaimDuration > time.Hour {
		return fmt.Errorf("--lease-duration %s and --claim-duration %s must be at least 1s, the claim's at most 1h", o.LeaseDuration, o.ClaimDuration)
	}
	if o.Name == "" || len(o.Name) > 63 {
		return fmt.Errorf("--name %q must be a DNS label", o.Name)
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
