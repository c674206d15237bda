package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"cozystack.io/contracts/artifact"
	"cozystack.io/tools/internal/chartlib"
)

// libResult is what package, vendor-lib and push-lib print with -o
// json|yaml: the library, and where it went.
type libResult struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Digest (sha256) and Size of the archive.
	Digest string `json:"digest"`
	Size   int    `json:"size"`
	// Path is the archive package wrote.
	Path string `json:"path,omitempty"`
	// Charts are the chart directories vendor-lib vendored the library
	// into (or, with --check, found it current in).
	Charts []string `json:"charts,omitempty"`
	// Reference is where push-lib pushed it: "<host>/<repository>:<version>",
	// and ManifestDigest the digest of its manifest.
	Reference      string `json:"reference,omitempty"`
	ManifestDigest string `json:"manifestDigest,omitempty"`
}

func newLibResult(lib *chartlib.Library) libResult {
	return libResult{Name: lib.Name, Version: lib.Version, Digest: fmt.Sprintf("sha256:%x", sha256.Sum256(lib.Archive)), Size: len(lib.Archive)}
}

func newPackage() *cobra.Command {
	var dest string
	var format *output
	c := &cobra.Command{
		Use:   "package <library-chart-dir>",
		Short: "Package a library chart reproducibly (as helm package, fixed file times)",
		Long: `Package writes <name>-<version>.tgz of a library chart such as
platform/charts/cozy-lib into the destination directory, with the layout of
helm package and every file time set to the Unix epoch: the same sources give
the same bytes, so vendored copies can be compared with it. The table is the
archive's path.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLinks(args[0], args[0]); err != nil {
				return err
			}
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
			r := newLibResult(lib)
			r.Path = out
			return format.write(cmd.OutOrStdout(), r, func(w io.Writer) error {
				_, err := fmt.Fprintln(w, out)
				return err
			})
		},
	}
	c.Flags().StringVarP(&dest, "destination", "d", ".", "directory to write the archive into")
	format = addOutput(c, "the archive's path (table), or also the library's name, version and digest (json, yaml)")
	return c
}

func newVendorLib() *cobra.Command {
	var check bool
	var format *output
	c := &cobra.Command{
		Use:   "vendor-lib <library.tgz> <chart-or-dir>...",
		Short: "Vendor a packaged library chart into the charts that depend on it",
		Long: `Vendor-lib does what helm dependency build does after pulling the library from
its OCI registry: it writes charts/<name>-<version>.tgz and Chart.lock into every
chart that declares the library as a dependency, found in the given chart
directories or below the given directories. The dependency must be pinned to
exactly the library's version from an oci:// repository (contract K5). With
--check nothing is written: it fails when a chart's vendored copy or lock
differs from what it would write. No chart depending on the library is an
error. The table is one line per chart: "<dir>: <library> <version>".`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			lib, err := chartlib.Load(args[0])
			if err != nil {
				return err
			}
			if err := checkChartTreeLinks(args[1:]...); err != nil {
				return err
			}
			dirs, err := chartlib.FindDependents(lib.Name, args[1:]...)
			if err != nil {
				return err
			}
			if len(dirs) == 0 {
				return fmt.Errorf("no chart under %v depends on %s", args[1:], lib.Name)
			}
			r := newLibResult(lib)
			for _, d := range dirs {
				if check {
					err = chartlib.Check(d, lib)
				} else {
					err = chartlib.Vendor(d, lib)
				}
				if err != nil {
					return err
				}
				r.Charts = append(r.Charts, d)
			}
			return format.write(cmd.OutOrStdout(), r, func(w io.Writer) error {
				for _, d := range r.Charts {
					if _, err := fmt.Fprintf(w, "%s: %s %s\n", d, lib.Name, lib.Version); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	c.Flags().BoolVar(&check, "check", false, "only check that the charts carry this library and a matching Chart.lock")
	format = addOutput(c, "a line per chart (table), or the charts and the library's name, version and digest (json, yaml)")
	return c
}

func newPushLib() *cobra.Command {
	var plainHTTP bool
	var format *output
	c := &cobra.Command{
		Use:   "push-lib <library.tgz> <host/repository>",
		Short: "Publish a packaged library chart to an OCI registry, as helm push does",
		Long: `Push-lib publishes a library chart archive (from cozypkg package) as a Helm OCI
chart, tagged with its version: push-lib cozy-lib-0.1.0.tgz 127.0.0.1:15000/cozystack/charts/cozy-lib
makes it oci://127.0.0.1:15000/cozystack/charts/cozy-lib:0.1.0, which the catalogs'
Chart.yaml name (repository oci://127.0.0.1:15000/cozystack/charts). The table is
"<host/repository>:<version>@<manifest digest>".`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			repo, ref, err := artifact.NewRepository(args[1], artifact.RemoteOptions{PlainHTTP: plainHTTP})
			if err != nil {
				return &usageError{err}
			}
			if ref != "" {
				return usagef("%s: name the repository only; the tag is the chart's version", args[1])
			}
			lib, err := chartlib.Load(args[0])
			if err != nil {
				return err
			}
			desc, err := chartlib.Push(cmd.Context(), lib, repo)
			if err != nil {
				return err
			}
			r := newLibResult(lib)
			r.Reference, r.ManifestDigest = args[1]+":"+lib.Version, desc.Digest.String()
			return format.write(cmd.OutOrStdout(), r, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s@%s\n", r.Reference, r.ManifestDigest)
				return err
			})
		},
	}
	c.Flags().BoolVar(&plainHTTP, "plain-http", false, "use HTTP instead of HTTPS (loopback registries)")
	format = addOutput(c, "the reference and manifest digest (table), or also the library's name, version and digest (json, yaml)")
	return c
}
