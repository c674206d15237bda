package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"cozystack.io/catalogs/services/backup/mariadbdriver"
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
		fmt.Fprintf(stderr, "mariadb-backup-driver: %v\n%s", err, cmd.UsageString())
		return 2
	default:
		fmt.Fprintf(stderr, "mariadb-backup-driver: %v\n", err)
		return 1
	}
}

func newCommand() *cobra.Command {
	var (
		kubeconfig, namespace, identity, name string
		lease, claim                          time.Duration
	)
	cmd := &cobra.Command{
		Use:           "mariadb-backup-driver",
		Short:         "Run the MariaDB backup driver (strategy kind MariaDB of backups.cozystack.io)",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unexpected arguments %v", args)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validate(namespace, name, lease, claim); err != nil {
				return usageError{err}
			}
			cfg, err := config(kubeconfig)
			if err != nil {
				return fmt.Errorf("kubeconfig: %w", err)
			}
			ctrl.SetLogger(klog.NewKlogr())
			o := mariadbdriver.Options{Name: name, Namespace: namespace, Version: version, Identity: identity,
				ClaimDuration: claim, LeaseDuration: lease}
			err = mariadbdriver.Start(cmd.Context(), cfg, o)
			if err != nil && cmd.Context().Err() != nil && errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file; empty means $KUBECONFIG, else the in-cluster configuration")
	f.StringVar(&namespace, "namespace", "", "the driver's namespace: its Lease and the credential Secrets (required)")
	f.StringVar(&identity, "identity", "", "this replica's identity in claims, e.g. the pod name; default <hostname>-<random>")
	f.StringVar(&name, "name", mariadbdriver.DefaultName, "name of the BackupDriver registration")
	f.DurationVar(&lease, "lease-duration", 30*time.Second, "lease of the registration, renewed every third (whole seconds)")
	f.DurationVar(&claim, "claim-duration", 60*time.Second, "claim lease of a run, renewed every third (whole seconds, at most 1h)")
	return cmd
}

// validate checks what driver.Setup would refuse, before connecting.
func validate(namespace, name string, lease, claim time.Duration) error {
	if namespace == "" {
		return errors.New("--namespace is required (the driver's own namespace)")
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("--name %q: %s", name, strings.Join(errs, "; "))
	}
	if lease < time.Second || claim < time.Second || claim > time.Hour {
		return fmt.Errorf("--lease-duration %s and --claim-duration %s must be at least 1s, the claim's at most 1h", lease, claim)
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
