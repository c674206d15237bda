package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"cozystack.io/contracts/artifact"
	"cozystack.io/tools/internal/chartlib"
)

func newPackage() *cobra.Command {
	var dest string
	c := &cobra.Command{
		Use:   "package <library-chart-dir>",
		Short: "Package a library chart reproducibly (as helm package, fixed file times)",
		Long: `Package writes <name>-<version>.tgz of a library chart such as
platform/charts/cozy-lib into the destination directory, with the layout of
helm package and every file time set to the Unix epoch: the same sources give
the same bytes, so vendored copies can be compared with it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, err := chartlib.Package(args[0])
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dest, 0o755); err != nil {
				return err
			}
			out := filepath.Join(dest, lib.FileName())
			if err := os.WriteFile(out, lib.Archive, 0o644); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), out)
			return nil
		},
	}
	c.Flags().StringVarP(&dest, "destination", "d", ".", "directory to write the archive into")
	return c
}

func newVendorLib() *cobra.Command {
	var check bool
	c := &cobra.Command{
		Use:   "vendor-lib <library.tgz> <chart-or-dir>...",
		Short: "Vendor a packaged library chart into the charts that depend on it",
		Long: `Vendor-lib does what helm dependency build does after pulling the library from
its OCI registry: it writes charts/<name>-<version>.tgz and Chart.lock into every
chart that declares the library as a dependency, found in the given chart
directories or below the given directories. The dependency must be pinned to
exactly the library's version from an oci:// repository (contract K5). With
--check nothing is written: it fails when a chart's vendored copy or lock
differs from what it would write.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, err := chartlib.Load(args[0])
			if err != nil {
				return err
			}
			dirs, err := chartlib.FindDependents(lib.Name, args[1:]...)
			if err != nil {
				return err
			}
			if len(dirs) == 0 {
				return fmt.Errorf("no chart under %v depends on %s", args[1:], lib.Name)
			}
			for _, d := range dirs {
				if check {
					err = chartlib.Check(d, lib)
				} else {
					err = chartlib.Vendor(d, lib)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s %s\n", d, lib.Name, lib.Version)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&check, "check", false, "only check that the charts carry this library and a matching Chart.lock")
	return c
}

func newPushLib() *cobra.Command {
	var plainHTTP bool
	c := &cobra.Command{
		Use:   "push-lib <library.tgz> <host/repository>",
		Short: "Publish a packaged library chart to an OCI registry, as helm push does",
		Long: `Push-lib publishes a library chart archive (from cozypkg package) as a Helm OCI
chart, tagged with its version: push-lib cozy-lib-0.1.0.tgz localhost:5000/cozystack/charts/cozy-lib
makes it oci://localhost:5000/cozystack/charts/cozy-lib:0.1.0, which the catalogs'
Chart.yaml name (repository oci://localhost:5000/cozystack/charts).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, err := chartlib.Load(args[0])
			if err != nil {
				return err
			}
			repo, ref, err := artifact.NewRepository(args[1], artifact.RemoteOptions{PlainHTTP: plainHTTP})
			if err != nil {
				return err
			}
			if ref != "" {
				return fmt.Errorf("%s: name the repository only; the tag is the chart's version, %s", args[1], lib.Version)
			}
			desc, err := chartlib.Push(cmd.Context(), lib, repo)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s:%s@%s\n", args[1], lib.Version, desc.Digest)
			return nil
		},
	}
	c.Flags().BoolVar(&plainHTTP, "plain-http", false, "use HTTP instead of HTTPS (loopback registries)")
	return c
}
