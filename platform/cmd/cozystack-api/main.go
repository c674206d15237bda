package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apiserver/pkg/registry/rest"

	"cozystack.io/platform/internal/apiserver"
	"cozystack.io/platform/internal/apiserver/appkinds"
	"cozystack.io/platform/internal/command"
	"cozystack.io/platform/internal/registry/application"
)

func main() { command.Main(newCommand()) }

func newCommand() *cobra.Command {
	o := apiserver.NewOptions()
	return command.New("cozystack-api",
		"Serve apps.cozystack.io/v1alpha1: one kind per ApplicationDefinition, stored as HelmReleases",
		o.AddFlags, func(ctx context.Context) error {
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
			return srv.Run(ctx)
		})
}
