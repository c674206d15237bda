package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"cozystack.io/sdk/localcp"
	"cozystack.io/tools/internal/sdkcompat"
)

// Exit statuses.
const (
	exitIncompatible = 1
	exitUsage        = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// failed is a result that is not OK, already printed: exit status 1.
var errFailed = errors.New("failed")

// execute runs the command line and returns the exit status.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errFailed):
		return exitIncompatible
	}
	fmt.Fprintln(stderr, "error:", err)
	return exitUsage
}

// output is -o: table or json; a bad value is a flag (usage) error.
type output string

func (o *output) String() string { return string(*o) }
func (o *output) Type() string   { return "table|json" }
func (o *output) Set(s string) error {
	if s != "table" && s != "json" {
		return errors.New("the accepted values are table and json")
	}
	*o = output(s)
	return nil
}

type globals struct {
	root   string
	output output
}

func newRoot() *cobra.Command {
	g := &globals{output: "table"}
	root := &cobra.Command{
		Use:   "cozystack-sdkcompat",
		Short: "Keep the SDK module cozystack.io/sdk compatible between releases",
		Long: `Compares the SDK module (sdk/) with the baseline of its previous release
(sdk/compat/v<version>/): its Go API with the pinned apidiff, its CRDs of
backups.cozystack.io field by field. sdk/backup/README.md, "SDK compatibility", says more.

Exit status: 0 ok; 1 an incompatible change no decision accepts, a canary
step that did not do what it must, or a refused baseline; 2 a usage or setup
error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("give a command: check, canary or baseline")
		},
	}
	root.PersistentFlags().StringVar(&g.root, "root", "", "the repository (default: the one the working directory is in)")
	root.PersistentFlags().VarP(&g.output, "output", "o", "output format: table or json")
	root.AddCommand(newCheck(g), newCanary(g), newBaseline(g))
	return root
}

// options finds the repository and the pinned apidiff.
func (g *globals) options(ctx context.Context) (sdkcompat.Options, string, error) {
	root := g.root
	if root == "" {
		r, ok := localcp.RepoRoot()
		if !ok {
			return sdkcompat.Options{}, "", errors.New("not inside the repository: give --root")
		}
		root = r
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return sdkcompat.Options{}, "", err
	}
	tool, err := sdkcompat.FindTool(ctx, filepath.Join(root, "tools"))
	if err != nil {
		return sdkcompat.Options{}, "", err
	}
	return sdkcompat.Options{SDKDir: filepath.Join(root, "sdk"), Tool: tool}, root, nil
}

func newCheck(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Compare sdk/ with the previous release's baseline; fail on an incompatible change",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, root, err := g.options(cmd.Context())
			if err != nil {
				return err
			}
			r, err := sdkcompat.Check(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if err := g.print(cmd.OutOrStdout(), r, func(w io.Writer) { printResult(w, root, r) }); err != nil {
				return err
			}
			if !r.OK() {
				return errFailed
			}
			return nil
		},
	}
}

func newCanary(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "canary",
		Short: "Prove that check fails on a scratch copy without one exported function, or with one CRD field renamed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, _, err := g.options(cmd.Context())
			if err != nil {
				return err
			}
			r, err := sdkcompat.RunCanary(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if err := g.print(cmd.OutOrStdout(), r, func(w io.Writer) { printCanary(w, r) }); err != nil {
				return err
			}
			if !r.OK() {
				return errFailed
			}
			return nil
		},
	}
}

func newBaseline(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "baseline",
		Short: "Write sdk/compat/v<sdk/VERSION>/: the export data of every package and copies of the CRDs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, root, err := g.options(cmd.Context())
			if err != nil {
				return err
			}
			r, err := sdkcompat.Baseline(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if err := g.print(cmd.OutOrStdout(), r, func(w io.Writer) { printBaseline(w, root, r) }); err != nil {
				return err
			}
			if r.Dir == "" {
				return errFailed
			}
			return nil
		},
	}
}

// print writes v as JSON, or calls table.
func (g *globals) print(w io.Writer, v any, table func(io.Writer)) error {
	if g.output == "json" {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(data))
		return err
	}
	table(w)
	return nil
}

// rel is p relative to root, for people.
func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

func printResult(w io.Writer, root string, r *sdkcompat.Result) {
	fmt.Fprintf(w, "sdk %s (%s) against the baseline %s (%s)\n", r.Version, rel(root, r.Module), r.Baseline,
		rel(root, filepath.Join(r.Module, sdkcompat.CompatDir, "v"+r.Baseline)))
	fmt.Fprintln(w, "apidiff report:")
	if strings.TrimSpace(r.APIReport) == "" {
		fmt.Fprintln(w, "  (no change)")
	}
	for _, l := range strings.Split(strings.TrimRight(r.APIReport, "\n"), "\n") {
		if l != "" {
			fmt.Fprintln(w, "  "+l)
		}
	}
	if len(r.Findings) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "AREA\tVERDICT\tCHANGE")
		for _, f := range r.Findings {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Area, f.Verdict(), strings.ReplaceAll(f.Change, "\n", " "))
		}
		tw.Flush()
	}
	for _, p := range r.Problems {
		fmt.Fprintln(w, "problem:", p)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	compatible, accepted := 0, 0
	for _, f := range r.Findings {
		if f.Compatible {
			compatible++
		} else if f.Accepted {
			accepted++
		}
	}
	if r.OK() {
		fmt.Fprintf(w, "ok: no incompatible change (%d compatible, %d accepted)\n", compatible, accepted)
	} else {
		fmt.Fprintf(w, "FAIL: %d incompatible change(s), %d problem(s)\n", len(r.Incompatible()), len(r.Problems))
	}
}

func printCanary(w io.Writer, r *sdkcompat.CanaryResult) {
	for i, s := range r.Steps {
		ok := "ok"
		if !s.OK {
			ok = "FAILED"
		}
		fmt.Fprintf(w, "canary %d %s\n  edit: %s\n  want: %s\n  got:  %s\n", i+1, ok, s.Edit, s.Want, strings.ReplaceAll(s.Got, "\n", " "))
	}
	if r.OK() {
		fmt.Fprintln(w, "ok: the check passes the unchanged copy and fails each broken one")
	} else {
		fmt.Fprintln(w, "FAIL: the compatibility check does not do what it must")
	}
}

func printBaseline(w io.Writer, root string, r *sdkcompat.BaselineResult) {
	if r.Check != nil {
		printResult(w, root, r.Check)
	}
	if r.Dir == "" {
		fmt.Fprintln(w, "FAIL: no baseline written")
		return
	}
	verb := "wrote"
	if r.Replaced {
		verb = "replaced"
	}
	fmt.Fprintf(w, "%s %s: %s (%d packages: %s), %s/ (%d CRDs)\n", verb, rel(root, r.Dir), sdkcompat.APIFile,
		len(r.Packages), strings.Join(r.Packages, ", "), sdkcompat.BaselineCRDDir, len(r.CRDs))
}
