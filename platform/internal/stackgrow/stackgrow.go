// Package stackgrow grows a request goroutine's stack once, while the
// goroutine is still shallow, instead of letting the runtime double it
// several times deep inside the request.
//
// A goroutine starts with a small stack, and whenever a call needs more
// the runtime doubles it, copying and adjusting every frame on it. The
// goroutines that serve a request in k8s.io/apiserver run long call chains
// (the filter chain, decoding, the field manager, the client of
// kube-apiserver), so each request paid several such copies at depth: 9%
// of cozystack-api's CPU in the create benchmark (BenchmarkApplicationAPI).
// One early growth to 64 KiB copies a few frames once. CockroachDB's
// growstack package does the same for the same reason.
package stackgrow

import (
	"net/http"

	"k8s.io/apiserver/pkg/authentication/authenticator"
)

// frame is the size of Grow's stack frame: called from a shallow frame it
// leaves the goroutine with a 64 KiB stack, which the runtime shrinks
// again at a garbage collection if the goroutine lives on and stays small.
const frame = 32 << 10

var (
	index int
	sink  byte
)

// Grow makes the calling goroutine's stack at least frame bytes deeper
// than the caller's frame, in a single growth.
//
//go:noinline
func Grow() {
	var buf [frame]byte
	sink = buf[index]
}

// Authenticator grows the stack of the goroutine that serves each request
// before authenticating it: authentication is the first step of a request
// that cozystack-api can hook into (it runs at the top of the goroutine
// that k8s.io/apiserver's timeout filter starts) and it is deep itself
// (certificate verification).
type Authenticator struct{ authenticator.Request }

// AuthenticateRequest implements authenticator.Request.
func (a Authenticator) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	Grow()
	return a.Request.AuthenticateRequest(r)
}
