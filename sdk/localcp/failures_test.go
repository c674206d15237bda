package localcp_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"cozystack.io/sdk/localcp"
)

func TestStartWithoutBinariesSaysHowToBuild(t *testing.T) {
	dir := t.TempDir()
	_, err := localcp.Start(context.Background(), localcp.Options{Layout: localcp.Layout{Root: t.TempDir()}, Dir: dir})
	if !errors.Is(err, localcp.ErrNotBuilt) {
		t.Fatalf("Start error = %v, want ErrNotBuilt", err)
	}
	for _, want := range []string{"etcd", "kube-apiserver", "make build"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestStartOnTakenPortFailsBeforeStartingAnything(t *testing.T) {
	if testing.Short() {
		t.Skip("needs built binaries")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	_, err = localcp.Start(context.Background(), localcp.Options{
		Layout: localcp.DefaultLayout(), Dir: dir, Ports: localcp.Ports{APIServer: taken},
	})
	if err == nil || !strings.Contains(err.Error(), "needed by kube-apiserver, is in use") {
		t.Fatalf("Start error = %v, want one naming the taken kube-apiserver port", err)
	}
	if procs, _ := localcp.ProcessesReferencing(dir); len(procs) > 0 {
		t.Errorf("processes started despite the taken port: %v", procs)
	}
}
