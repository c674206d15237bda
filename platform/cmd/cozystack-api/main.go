// Command cozystack-api is the aggregated API server of the application API
// (apps.cozystack.io/v1alpha1): one resource per ApplicationDefinition,
// stored as Flux HelmReleases. See package
// cozystack.io/platform/internal/apiserver.
package main

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	"cozystack.io/platform/internal/apiserver"
	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/platform/internal/registry/application"
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
	o := apiserver.NewOptions()
	cmd := &cobra.Command{
		Use:           "cozystack-api",
		Short:         "Serve apps.cozystack.io/v1alpha1: one kind per ApplicationDefinition, stored as HelmReleases",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if errs := o.Recommended.Validate(); len(errs) > 0 {
				return fmt.Errorf("invalid options: %v", errs)
			}
			if err := o.ApplyMemoryLimit(); err != nil {
				return err
			}
			srv, err := apiserver.New(o, func(k *appkinds.Kind, b application.Backend) rest.Storage {
				return application.NewREST(k, b)
			})
			if err != nil {
				return err
			}
			return srv.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd.Flags())
	logFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(logFlags)
	cmd.Flags().AddGoFlagSet(logFlags)
	return cmd
}
