package main

import (
	"path/filepath"

	"github.com/spf13/cobra"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/content/oci"

	"cozystack.io/contracts/artifact"
	"cozystack.io/contracts/artifact/build"
)

func newBuild() *cobra.Command {
	var layout, tag string
	var format *output
	c := &cobra.Command{
		Use:   "build <catalog-dir>",
		Short: "Build a catalog directory into an OCI image-layout directory",
		Long: `Build packages every chart the catalog's components and applications use, with
the libraries they depend on vendored in, adds each file of applicationdefinitions/
(the catalog's ApplicationDefinitions and their admission policies, checked as the
platform will: a bad one stops the build, naming the file and field), and writes
the artifact (README.md in cozystack.io/contracts/artifact) into an OCI
image-layout directory, tagged with the catalog version unless --tag says
otherwise. Building the same directory again gives the same digest. A symbolic
link in what the build reads whose target is missing stops it, naming the link.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkCatalogLinks(args[0]); err != nil {
				return err
			}
			ctx := cmd.Context()
			// Build in memory, then copy, so that the layout only ever
			// holds complete artifacts and every blob is reported.
			staged := memory.New()
			res, err := build.Build(ctx, args[0], staged, build.Options{Tag: tag})
			if err != nil {
				return err
			}
			if layout == "" {
				layout = filepath.Join("dist", res.Catalog.Name)
			}
			store, err := oci.NewWithContext(ctx, layout)
			if err != nil {
				return err
			}
			p := &progress{w: cmd.ErrOrStderr()}
			if _, err := p.copy(ctx, staged, res.Tag, store, res.Tag); err != nil {
				return err
			}
			a, err := artifact.Pull(ctx, store, res.Tag, nil, artifact.PullOptions{})
			if err != nil {
				return err
			}
			return newResult(layout+":"+res.Tag, a).print(cmd.OutOrStdout(), *format, "Built")
		},
	}
	c.Flags().StringVar(&layout, "oci-layout", "", "OCI image-layout directory to write (default dist/<catalog name>)")
	c.Flags().StringVar(&tag, "tag", "", "tag of the artifact (default the catalog version)")
	format = addOutput(c, "the reference and digest (table), or also every chart and definition file (json, yaml)")
	return c
}
