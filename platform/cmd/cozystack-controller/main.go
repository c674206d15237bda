// Command cozystack-controller runs the platform's reconcilers under one
// leader-elected controller-runtime manager: today the K2 projection of
// ClusterValues into every tenant namespace (package
// cozystack.io/platform/internal/controller/clustervalues). See package
// cozystack.io/platform/internal/controller/runner for the options.
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

	"cozystack.io/platform/internal/controller/runner"
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
	o := runner.NewOptions()
	cmd := &cobra.Command{
		Use:           "cozystack-controller",
		Short:         "Project ClusterValues into every tenant namespace (contract K2), under leader election",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctrl.SetLogger(klog.NewKlogr())
			return runner.Run(cmd.Context(), o)
		},
	}
	o.AddFlags(cmd.Flags())
	logFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(logFlags)
	cmd.Flags().AddGoFlagSet(logFlags)
	return cmd
}
