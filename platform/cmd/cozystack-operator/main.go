package main

import (
	"context"

	"github.com/spf13/cobra"

	"cozystack.io/platform/internal/command"
	"cozystack.io/platform/internal/operator"
)

func main() { command.Main(newCommand()) }

func newCommand() *cobra.Command {
	o := operator.NewOptions()
	return command.New("cozystack-operator",
		"Pull catalogs (PackageSource), serve their charts to Flux and install them (Package)",
		o.AddFlags, func(ctx context.Context) error { return operator.Run(ctx, o) })
}
