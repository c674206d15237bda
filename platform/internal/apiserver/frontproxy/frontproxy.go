package frontproxy

import (
	"crypto/sha256"
	"crypto/x509"
	"net/http"
	"sync"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
)

// CacheTTL bounds how long a verified chain is trusted without being
// verified again.
const CacheTTL = 10 * time.Minute

// maxEntries bounds the cache: kube-apiserver instances present one or a
// few front-proxy certificates, so a full cache is simply emptied.
const maxEntries = 256

// Authenticator is an authenticator.Request for front-proxy requests. It
// answers (nil, false, nil) for any request it cannot vouch for (no client
// certificate, one that does not verify against the request-header CA, a
// common name that is not allowed, no username header), so that it is used
// in front of the upstream authenticator built from the same configuration,
// which then authenticates the request or states the error.
type Authenticator struct {
	config  *authenticatorfactory.RequestHeaderConfig
	headers authenticator.Request
	now     func() time.Time
	// verify is x509.Certificate.Verify; tests count calls through it.
	verify func(leaf *x509.Certificate, opts x509.VerifyOptions) ([][]*x509.Certificate, error)

	mu       sync.Mutex
	verified map[cacheKey]window
}

type cacheKey struct {
	roots *x509.CertPool
	chain [sha256.Size]byte
}

// window is when a verified chain is trusted.
type window struct{ notBefore, notAfter time.Time }

// New returns an Authenticator for the request-header configuration that
// k8s.io/apiserver's authentication options produced
// (genericapiserver.AuthenticationInfo.RequestHeaderConfig).
func New(c *authenticatorfactory.RequestHeaderConfig) *Authenticator {
	return &Authenticator{
		config:  c,
		headers: headerrequest.NewDynamic(c.UsernameHeaders, c.UIDHeaders, c.GroupHeaders, c.ExtraHeaderPrefixes),
		now:     time.Now,
		verify: func(leaf *x509.Certificate, opts x509.VerifyOptions) ([][]*x509.Certificate, error) {
			return leaf.Verify(opts)
		},
		verified: map[cacheKey]window{},
	}
}

// AuthenticateRequest implements authenticator.Request.
func (a *Authenticator) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	opts, ok := a.config.CAContentProvider.VerifyOptions()
	if !ok || !a.verifiedChain(opts, req.TLS.PeerCertificates) {
		return nil, false, nil
	}
	if !allowed(a.config.AllowedClientNames, req.TLS.PeerCertificates[0].Subject.CommonName) {
		return nil, false, nil
	}
	return a.headers.AuthenticateRequest(req)
}

// verifiedChain reports whether certs (leaf first, then intermediates, as
// the client sent them) verify against opts, from the cache when possible.
func (a *Authenticator) verifiedChain(opts x509.VerifyOptions, certs []*x509.Certificate) bool {
	h := sha256.New()
	for _, c := range certs {
		sum := sha256.Sum256(c.Raw)
		h.Write(sum[:])
	}
	key := cacheKey{roots: opts.Roots}
	h.Sum(key.chain[:0])

	now := a.now()
	a.mu.Lock()
	w, hit := a.verified[key]
	a.mu.Unlock()
	if hit && !now.Before(w.notBefore) && now.Before(w.notAfter) {
		return true
	}

	// As upstream: intermediates come from the request unless the options
	// name them.
	if opts.Intermediates == nil && len(certs) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range certs[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	opts.CurrentTime = now
	chains, err := a.verify(certs[0], opts)
	if err != nil || len(chains) == 0 {
		return false
	}
	w = window{notAfter: now.Add(CacheTTL)}
	for _, c := range chains[0] {
		if c.NotBefore.After(w.notBefore) {
			w.notBefore = c.NotBefore
		}
		if c.NotAfter.Before(w.notAfter) {
			w.notAfter = c.NotAfter
		}
	}
	a.mu.Lock()
	if len(a.verified) >= maxEntries {
		clear(a.verified)
	}
	a.verified[key] = w
	a.mu.Unlock()
	return true
}

// allowed applies the request-header allowed names: empty allows any
// common name.
func allowed(names headerrequest.StringSliceProvider, cn string) bool {
	if names == nil {
		return true
	}
	list := names.Value()
	if len(list) == 0 {
		return true
	}
	for _, n := range list {
		if n == cn {
			return true
		}
	}
	return false
}
