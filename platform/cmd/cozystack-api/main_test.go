package main

import (
	"testing"
)

// The recommended options and ours share one flag set: a duplicate flag
// would panic at start.
func TestFlags(t *testing.T) {
	cmd := newCommand()
	if err := cmd.ParseFlags([]string{"--kubeconfig=/x", "--secure-port=1", "--apiservice=a", "--register-local=ns/svc", "--install-crds", "-v=2"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kubeconfig", "secure-port", "tls-cert-file", "apiservice", "register-local", "register-ca-file", "install-crds", "authentication-kubeconfig", "memory-limit", "v"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("flag --%s missing", name)
		}
	}
}
