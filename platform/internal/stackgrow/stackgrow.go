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
