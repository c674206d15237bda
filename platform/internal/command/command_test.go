package command

import (
	"context"
	"errors"
	"testing"

	"github.com/spf13/pflag"
)

// The exit codes every platform binary documents.
func TestExecuteExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		run  error
		want int
	}{
		{"clean stop", nil, nil, ExitOK},
		{"failure", nil, errors.New("boom"), ExitError},
		{"unknown flag", []string{"--nope"}, nil, ExitUsage},
		{"bad flag value", []string{"--n=x"}, nil, ExitUsage},
		{"an argument", []string{"extra"}, nil, ExitUsage},
		{"klog flag", []string{"-v=2"}, nil, ExitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n int
			cmd := New("demo", "a demo", func(fs *pflag.FlagSet) { fs.IntVar(&n, "n", 0, "a number") },
				func(context.Context) error { return tc.run })
			cmd.SetArgs(tc.args)
			if got := Execute(cmd); got != tc.want {
				t.Errorf("exit code %d, want %d", got, tc.want)
			}
		})
	}
}
