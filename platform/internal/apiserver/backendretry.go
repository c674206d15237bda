package apiserver

import (
	"net/http"

	restclient "k8s.io/client-go/rest"
)

// withoutTimeoutRetries makes client-go return kube-apiserver's 504
// answers at once instead of retrying them. kube-apiserver answers a read
// at a resourceVersion it has not reached ("Too large resource version")
// after waiting 3 s for its watch cache, with 504 and Retry-After: 1, and
// client-go retries such an answer up to ten times: a tenant's GET with a
// future resourceVersion held this server for about 43 s. The answer goes
// back to the client as it came (mapError keeps its retryAfterSeconds), so
// the client decides whether to retry, as it would against kube-apiserver.
func withoutTimeoutRetries(cfg *restclient.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return timeoutPassthrough{rt} })
}

type timeoutPassthrough struct{ next http.RoundTripper }

func (t timeoutPassthrough) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusGatewayTimeout {
		resp.Header.Del("Retry-After")
	}
	return resp, err
}

// WrappedRoundTripper lets client-go's transport debugging see through.
func (t timeoutPassthrough) WrappedRoundTripper() http.RoundTripper { return t.next }
