package localcp

import (
	"context"
	"errors"
	"io"
	"testing"
)

func TestRunStepRetriesOnlyPickedPorts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		given     Ports
		err       error
		wantCalls int
		wantErr   bool
	}{
		{"picked port lost once", Ports{}, errors.New("etcd exited: bind: address already in use"), 2, false},
		{"fixed port is never changed", Ports{Etcd: 23790, EtcdPeer: 23800}, errors.New("bind: address already in use"), 1, true},
		{"other errors are not retried", Ports{}, errors.New("etcd exited: bad flag"), 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cp := &ControlPlane{State: State{Dir: dir, Ports: tc.given}, opts: Options{Ports: tc.given, Out: io.Discard}, pki: PKI{Dir: dir}}
			if err := cp.Ports.fill(); err != nil {
				t.Fatal(err)
			}
			before := cp.Ports.Etcd
			calls := 0
			picked := tc.given.Etcd == 0 && tc.given.EtcdPeer == 0
			err := cp.runStep(context.Background(), step{"etcd", []*int{&cp.Ports.Etcd, &cp.Ports.EtcdPeer}, picked, func(context.Context) error {
				calls++
				if calls == 1 {
					return tc.err
				}
				return nil
			}})
			if calls != tc.wantCalls || (err != nil) != tc.wantErr {
				t.Fatalf("calls = %d, err = %v; want %d calls, error %v", calls, err, tc.wantCalls, tc.wantErr)
			}
			if tc.wantCalls == 2 && cp.Ports.Etcd == before {
				t.Error("the retry did not pick a new port")
			}
			if tc.given.Etcd != 0 && cp.Ports.Etcd != tc.given.Etcd {
				t.Error("a fixed port was changed")
			}
		})
	}
}
