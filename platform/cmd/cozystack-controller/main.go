// Command cozystack-controller runs the platform's reconcilers under one
// leader-elected controller-runtime manager: today the K2 projection of
// ClusterValues into every tenant namespace (package
// cozystack.io/platform/internal/controller/clustervalues). See package
// cozystack.io/platform/internal/controller/runner for the options.
package main

import (
	"context"

	"github.com/spf13/cobra"

	"cozystack.io/platform/internal/command"
	"cozystack.io/platform/internal/controller/runner"
)

func main() { command.Main(newCommand()) }

func newCommand() *cobra.Command {
	o := runner.NewOptions()
	return command.New("cozystack-controller",
		"Project ClusterValues into every tenant namespace (contract K2), under leader election",
		o.AddFlags, func(ctx context.Context) error { return runner.Run(ctx, o) })
}
