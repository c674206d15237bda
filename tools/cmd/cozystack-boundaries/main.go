package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"cozystack.io/tools/internal/boundary"
	"cozystack.io/tools/internal/boundary/report"
)

// Exit codes.
const (
	exitForbidden = 1
	exitUsage     = 2
	exitFailure   = 3
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitError carries an exit code out of cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// run executes the command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	cmd := newCommand(stdout, stderr)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "cozystack-boundaries:", ee.err)
		}
		return ee.code
	}
	// cobra's own errors: unknown flags, bad arguments.
	fmt.Fprintln(stderr, "cozystack-boundaries:", err)
	return exitUsage
}

func newCommand(stdout, stderr io.Writer) *cobra.Command {
	var (
		opts          boundary.Options
		output        string
		forbiddenOnly bool
		verbose       bool
	)
	cmd := &cobra.Command{
		Use:   "cozystack-boundaries",
		Short: "Find the edges between the modules of a tree and fail on a forbidden one",
		Long: `Finds every edge between the modules of a tree and judges it against
boundaries.yaml at the root (or --config). Rules: go-import, go-parse,
helm-include, unknown-include, dynamic-include, helm-lookup,
dynamic-lookup, helm-capabilities, dynamic-capabilities, chart-dependency,
chart-symlink, crd-kind, template-parse. Charts are read as Helm loads
them, symbolic links followed; a link that dangles, loops or leaves the
tree is a chart-symlink finding. Each forbidden helm-lookup and
helm-capabilities edge says what the contracts offer instead (K2 key, K3
property, or "none yet").

Without a configuration file, each top-level directory (or the root, when it
is a chart) is a module, API groups belong to the module that ships their
CRDs, and no edge between modules is allowed: the edges are counted.

Exit status: 0 no forbidden edge, 1 a forbidden edge, 2 usage or
configuration error (a module path of boundaries.yaml that matches nothing
in the tree among them), 3 the tree could not be read.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format := report.Format(output)
			if format != report.Table && format != report.JSON && format != report.YAML {
				return &exitError{exitUsage, fmt.Errorf("-o %q: want table, json or yaml", output)}
			}
			start := time.Now()
			r, err := boundary.Run(opts)
			var ce *boundary.ConfigError
			switch {
			case errors.As(err, &ce):
				return &exitError{exitUsage, err}
			case err != nil:
				return &exitError{exitFailure, err}
			}
			if err := r.Write(stdout, format, forbiddenOnly); err != nil {
				return &exitError{exitFailure, err}
			}
			if verbose {
				fmt.Fprintf(stderr, "scanned %s in %v\n", opts.Root, time.Since(start).Round(time.Millisecond))
			}
			if r.Summary.Forbidden > 0 {
				return &exitError{exitForbidden, nil}
			}
			return nil
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	f := cmd.Flags()
	f.StringVar(&opts.Root, "root", ".", "the tree to scan")
	f.StringVar(&opts.Config, "config", "", "configuration file (default <root>/boundaries.yaml when present)")
	f.BoolVar(&opts.Infer, "infer", false, "ignore boundaries.yaml: every top-level directory is a module")
	f.StringVarP(&output, "output", "o", "table", "output format: table, json or yaml")
	f.BoolVar(&forbiddenOnly, "forbidden-only", false, "list only forbidden edges in the table (the summary counts all)")
	f.BoolVarP(&verbose, "verbose", "v", false, "print the time the scan took to stderr")
	return cmd
}
