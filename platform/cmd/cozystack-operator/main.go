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
