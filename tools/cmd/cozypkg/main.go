package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitFailed = 1
	exitUsage  = 2
)

// exitStatuses is the table of exit statuses, printed by cozypkg --help;
// docs/catalog-author/build-and-push.md ("Catalogs: cozypkg build and push") has the same rows
// (TestREADME).
var exitStatuses = []struct {
	Code    int
	Meaning string
}{
	{0, "success: built, pushed, packaged, vendored, or the catalog conforms (warnings do not fail)"},
	{exitFailed, "a finding or a refusal (a catalog or definition that fails a check, a conformance error, a vendored copy that differs, an input with nothing to check), or an operational failure (a registry unreachable, a file unreadable); the message on stderr says which"},
	{exitUsage, "a usage error: an unknown command or flag, a missing or extra argument, a bad flag value (-o, --platform-version) or flags that exclude each other; nothing was read or written"},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// execute runs cozypkg with args, prints an error to stderr as
// "error: <message>" and returns the exit status (exitStatuses).
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "error:", err)
	return exitCode(err)
}

// exitCode is exitUsage for a usageError, else exitFailed.
func exitCode(err error) int {
	if _, ok := errors.AsType[*usageError](err); ok {
		return exitUsage
	}
	return exitFailed
}

// usageError is a mistake in the command line, found before anything is
// read or written: it exits with exitUsage.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error {
	return &usageError{fmt.Errorf(format, a...)}
}

func newRoot() *cobra.Command {
	var names []string
	root := &cobra.Command{
		Use:   "cozypkg",
		Short: "Build, publish and check cozystack catalogs as OCI artifacts",
		Long: `Cozypkg builds a catalog directory into an OCI artifact, publishes it, packages
and vendors the library charts catalogs use, and checks a catalog against the
contracts of a platform version (conformance). Output is a table (the
default), or JSON or YAML with -o; progress goes to stderr.

Exit status:
` + exitTable(),
		SilenceUsage:               true,
		SilenceErrors:              true,
		SuggestionsMinimumDistance: 2,
		// Without RunE and Args cobra would print help for a missing
		// command and exit 0; a missing or unknown one is a usage error.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			hint := ""
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				hint = fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
			}
			return usagef("unknown command %q%s: the commands are %s", args[0], hint, strings.Join(names, ", "))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("give a command: %s (cozypkg --help says more)", strings.Join(names, ", "))
		},
	}
	// The root runs only to report a usage error: its usage shows only
	// "cozypkg [command]".
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(), "Usage:{{if .Runnable}}", "Usage:{{if and .Runnable .HasParent}}", 1))
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &usageError{fmt.Errorf("%s: %w (%s --help lists the flags)", cmd.CommandPath(), err, cmd.CommandPath())}
	})
	// cobra's help command prints the root's help for an unknown topic and
	// exits 0.
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return usagef("unknown help topic %q: the commands are %s", strings.Join(args, " "), strings.Join(names, ", "))
			}
			return c.Help()
		},
	})
	root.AddCommand(newBuild(), newPush(), newPackage(), newVendorLib(), newPushLib(), newConformance())
	for _, c := range root.Commands() {
		names = append(names, c.Name())
		if c.Args != nil {
			c.Args = usageArgs(c.Args)
		}
	}
	return root
}

// usageArgs makes the errors of an argument validator usage errors, with
// the command's usage line.
func usageArgs(validate cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := validate(cmd, args); err != nil {
			return &usageError{fmt.Errorf("%s: %w (usage: %s)", cmd.CommandPath(), err, cmd.UseLine())}
		}
		return nil
	}
}

// exitTable formats exitStatuses for --help: the code, then its meaning
// wrapped at 80 columns.
func exitTable() string {
	const indent = "     "
	var b strings.Builder
	for _, s := range exitStatuses {
		line := fmt.Sprintf("  %d  ", s.Code)
		for i, w := range strings.Fields(s.Meaning) {
			switch {
			case i == 0:
			case len(line)+1+len(w) > 80:
				b.WriteString(line + "\n")
				line = indent
			default:
				line += " "
			}
			line += w
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
