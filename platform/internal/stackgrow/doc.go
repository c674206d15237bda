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
