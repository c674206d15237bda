package main

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

// The recommended options and ours share one flag set: a duplicate flag
// would panic at start.
func TestFlags(t *testing.T) {
	cmd := newCommand()
	if err := cmd.ParseFlags([]string{"--kubeconfig=/x", "--secure-port=1", "--apiservice=a", "--register-local=ns/svc", "--install-crds", "-v=2"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kubeconfig", "secure-port", "tls-cert-file", "apiservice", "register-local", "register-ca-file", "install-crds", "authentication-kubeconfig", "v"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("flag --%s missing", name)
		}
	}
}

func TestApplyMemoryLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	for _, tc := range []struct {
		limit   string
		want    int64 // the runtime's limit after the call
		wantErr string
	}{
		{limit: "128Mi", want: 128 << 20},
		{limit: "0", want: math.MaxInt64},
		{limit: "64Mi", want: 64 << 20},
		{limit: "lots", want: 64 << 20, wantErr: `--memory-limit "lots"`}, // refused: unchanged
	} {
		err := applyMemoryLimit(tc.limit)
		if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: error %v, want one containing %q", tc.limit, err, tc.wantErr)
		}
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("%s: memory limit %d, want %d", tc.limit, got, tc.want)
		}
	}
}
