// Command cozystack-operator delivers catalogs: it pulls each
// PackageSource's OCI artifact, verifies it, serves its charts to
// helm-controller as ExternalArtifacts, and installs Packages as
// HelmReleases through least-privilege ServiceAccounts, under one
// leader-elected controller-runtime manager. See package
// cozystack.io/platform/internal/operator for the options and README.md
// ("Catalog delivery") for a walk-through.
package main

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"cozystack.io/platform/internal/operator"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	o := operator.NewOptions()
	cmd := &cobra.Command{
		Use:           "cozystack-operator",
		Short:         "Pull catalogs (PackageSource), serve their charts to Flux and install them (Package)",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := o.Platform(); err != nil {
				return err
			}
			ctrl.SetLogger(klog.NewKlogr())
			return operator.Run(cmd.Context(), o)
		},
	}
	o.AddFlags(cmd.Flags())
	logFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(logFlags)
	cmd.Flags().AddGoFlagSet(logFlags)
	return cmd
}
