package main

import (
	"context"

	"github.com/spf13/cobra"

	"cozystack.io/platform/internal/command"
	"cozystack.io/platform/internal/controller"
)

func main() { command.Main(newCommand()) }

func newCommand() *cobra.Command {
	o := controller.NewOptions()
	return command.New("cozystack-controller",
		"Project ClusterValues into every tenant namespace (K2), keep the tenant roles and the tenant quota tree, run the backup core and the Job backup driver (K7), under leader election",
		o.AddFlags, func(ctx context.Context) error { return controller.Run(ctx, o) })
}
