// Package frontproxy authenticates requests that kube-apiserver's
// aggregation layer (the front proxy) forwards, as k8s.io/apiserver's
// request-header authenticator does, but verifies each front-proxy
// certificate chain once rather than on every request.
//
// k8s.io/apiserver verifies the proxy's client certificate on every
// request (x509.Certificate.Verify: an ECDSA or RSA signature check and
// chain building, about 0.15 ms on the machines we benchmark on), although
// kube-apiserver sends every request over a few long-lived connections with
// the same certificate. A successful verification is remembered here for
// the certificate chain and the exact CA pool it was verified against; it
// expires with the chain's validity window and after CacheTTL at the
// latest, and a rotated CA bundle (a new pool) is verified afresh. The
// allowed client names and the identity headers are read on every request,
// as upstream does.
package frontproxy
