package command

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Exit codes of every platform binary.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// New returns the command use (short is its one-line help): it takes no
// arguments, registers addFlags' flags and klog's, and runs run with the
// command's context.
func New(use, short string, addFlags func(*pflag.FlagSet), run func(ctx context.Context) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:           use,
		Short:         short,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(klog.NewKlogr())
			return run(cmd.Context())
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	addFlags(cmd.Flags())
	logFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(logFlags)
	cmd.Flags().AddGoFlagSet(logFlags)
	return cmd
}

// usageError marks a flag or argument error: exit code ExitUsage.
type usageError struct{ error }

// Main runs cmd until it returns or the process is interrupted, and exits
// with the code of its outcome.
func Main(cmd *cobra.Command) {
	os.Exit(Execute(cmd))
}

// Execute runs cmd as Main does and returns the exit code instead of
// exiting.
func Execute(cmd *cobra.Command) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(os.Stderr, "error:", err)
	if _, ok := err.(usageError); ok {
		return ExitUsage
	}
	return ExitError
}
