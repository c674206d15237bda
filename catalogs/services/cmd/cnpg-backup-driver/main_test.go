package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Exit codes: 2 for usage errors, 1 for errors; a signal's exit (0) is
// checked by the driver's kill test (backup/cnpgdriver).
func TestExitCodes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.kubeconfig")
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"unknown flag", []string{"--bogus"}, 2, "unknown flag"},
		{"argument", []string{"--namespace", "x", "extra"}, 2, "unexpected arguments"},
		{"no namespace", nil, 2, "--namespace is required"},
		{"claim too long", []string{"--namespace", "x", "--claim-duration", "2h"}, 2, "at most 1h"},
		{"bad duration", []string{"--namespace", "x", "--lease-duration", "soon"}, 2, "invalid argument"},
		{"no kubeconfig", []string{"--namespace", "x", "--kubeconfig", missing}, 1, "missing.kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := run(context.Background(), tc.args, &out); code != tc.code {
				t.Errorf("exit %d, want %d; output:\n%s", code, tc.code, out.String())
			}
			if !strings.Contains(out.String(), tc.says) {
				t.Errorf("output does not say %q:\n%s", tc.says, out.String())
			}
		})
	}
}
