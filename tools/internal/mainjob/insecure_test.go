package mainjob_test

import (
	"crypto/tls"
	"net/http"
)

// insecure is a transport for health checks of processes serving with
// their own certificates on loopback; the /readyz answer is all it reads.
func insecure() http.RoundTripper {
	return &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // loopback health check only
}
